#include "protocol/request_writer.h"

#include <charconv>
#include <cstring>

namespace ringkv::protocol {
namespace {

// "<type><n>\r\n" at p (at most 23 bytes); returns the end.
char* put_length(char* p, char type, size_t n) {
  *p++ = type;
  p = std::to_chars(p, p + 20, n).ptr;
  *p++ = '\r';
  *p++ = '\n';
  return p;
}

void append_length(std::string& out, char type, size_t n) {
  char buf[24];
  out.append(buf, put_length(buf, type, n));
}

}  // namespace

void append_request_header(std::string& out, size_t n) { append_length(out, '*', n); }

void append_request_bulk(std::string& out, std::string_view s) {
  append_length(out, '$', s.size());
  out.append(s);
  out += "\r\n";
}

void append_request(std::string& out, std::span<const std::string_view> argv) {
  // Written in place: each argument costs its bytes plus at most 24 of framing (a length of up
  // to 20 digits, its type byte and two CRLFs), so the string grows once and is cut to size.
  size_t size = 24;
  for (std::string_view a : argv) size += a.size() + 24;
  const size_t at = out.size();
  out.resize(at + size);
  char* p = put_length(out.data() + at, '*', argv.size());
  for (std::string_view a : argv) {
    p = put_length(p, '$', a.size());
    if (!a.empty()) std::memcpy(p, a.data(), a.size());
    p += a.size();
    *p++ = '\r';
    *p++ = '\n';
  }
  out.resize(static_cast<size_t>(p - out.data()));
}

}  // namespace ringkv::protocol
