#include "protocol/request_writer.h"

#include <charconv>

namespace ringkv::protocol {
namespace {

void append_length(std::string& out, char type, size_t n) {
  char buf[24];
  buf[0] = type;
  auto r = std::to_chars(buf + 1, buf + sizeof(buf) - 2, n);
  *r.ptr++ = '\r';
  *r.ptr++ = '\n';
  out.append(buf, r.ptr);
}

}  // namespace

void append_request_header(std::string& out, size_t n) { append_length(out, '*', n); }

void append_request_bulk(std::string& out, std::string_view s) {
  append_length(out, '$', s.size());
  out.append(s);
  out += "\r\n";
}

void append_request(std::string& out, std::span<const std::string_view> argv) {
  // One allocation: each argument costs its bytes plus at most 16 of framing.
  size_t size = out.size() + 16;
  for (std::string_view a : argv) size += a.size() + 16;
  out.reserve(size);
  append_request_header(out, argv.size());
  for (std::string_view a : argv) append_request_bulk(out, a);
}

}  // namespace ringkv::protocol
