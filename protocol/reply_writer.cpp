// ReplyWriter: RESP2/RESP3 encodings byte-for-byte as Redis 7.0.15 writes them (networking.c's
// addReply* family). Numbers are formatted with std::to_chars into stack buffers.
#include "protocol/reply_writer.h"

#include <cassert>
#include <charconv>
#include <cmath>

namespace ringkv::protocol {
namespace {

// Type byte + sign + 19 digits + CRLF.
constexpr size_t kMaxHeaderLen = 24;

// Formats d like printf("%.17g"), which Redis 7.0's addReplyDouble uses.
std::string_view format_double(double d, char (&buf)[32]) {
  const auto result = std::to_chars(buf, buf + sizeof(buf), d, std::chars_format::general, 17);
  return {buf, static_cast<size_t>(result.ptr - buf)};
}

// Writes "<type><n>\r\n" into buf (kMaxHeaderLen bytes at most) and returns its length.
size_t encode_header(char type, int64_t n, char* buf) {
  buf[0] = type;
  char* end = std::to_chars(buf + 1, buf + kMaxHeaderLen - 2, n).ptr;
  *end++ = '\r';
  *end++ = '\n';
  return static_cast<size_t>(end - buf);
}

}  // namespace

void ReplyWriter::simple(std::string_view s) {
  assert(s.find_first_of("\r\n") == std::string_view::npos);
  std::string& out = *out_;
  out.push_back('+');
  out.append(s);
  out.append(reply::kCrlf);
}

void ReplyWriter::ok() { out_->append(reply::kOk); }

void ReplyWriter::pong() { out_->append(reply::kPong); }

void ReplyWriter::queued() { out_->append(reply::kQueued); }

void ReplyWriter::error(std::string_view msg) {
  std::string& out = *out_;
  out.push_back('-');
  const size_t start = out.size();
  out.append(msg);
  // A CR or LF inside the message would end the reply early and desync the client.
  for (size_t i = start; i < out.size(); ++i) {
    if (out[i] == '\r' || out[i] == '\n') out[i] = ' ';
  }
  if (error_observer_ != nullptr) {
    error_observer_->on_error_reply(std::string_view(out).substr(start));
  }
  out.append(reply::kCrlf);
}

void ReplyWriter::integer(int64_t n) {
  if (n == 0) {
    out_->append(reply::kZero);
  } else if (n == 1) {
    out_->append(reply::kOne);
  } else {
    header(':', n);
  }
}

void ReplyWriter::bulk(std::string_view s) {
  // A short string (a list's or a hash's element, most often) goes in one append: the header,
  // the string and its CRLF each appended cost more than the bytes they copy.
  constexpr size_t kShort = 64;
  if (s.size() <= kShort) {
    char buf[kMaxHeaderLen + kShort + 2];
    size_t n = encode_header('$', static_cast<int64_t>(s.size()), buf);
    s.copy(buf + n, s.size());
    n += s.size();
    buf[n++] = '\r';
    buf[n++] = '\n';
    out_->append(buf, n);
    return;
  }
  header('$', static_cast<int64_t>(s.size()));
  out_->append(s);
  out_->append(reply::kCrlf);
}

void ReplyWriter::bulk_integer(int64_t n) {
  char digits[24];
  const auto result = std::to_chars(digits, digits + sizeof(digits), n);
  bulk({digits, static_cast<size_t>(result.ptr - digits)});
}

void ReplyWriter::null() {
  out_->append(version_ == RespVersion::kResp3 ? reply::kNullResp3 : reply::kNullBulkResp2);
}

void ReplyWriter::null_array() {
  out_->append(version_ == RespVersion::kResp3 ? reply::kNullResp3 : reply::kNullArrayResp2);
}

void ReplyWriter::array(size_t n) { header('*', static_cast<int64_t>(n)); }

void ReplyWriter::map(size_t n) {
  if (version_ == RespVersion::kResp3) {
    header('%', static_cast<int64_t>(n));
  } else {
    header('*', static_cast<int64_t>(2 * n));
  }
}

void ReplyWriter::set(size_t n) {
  header(version_ == RespVersion::kResp3 ? '~' : '*', static_cast<int64_t>(n));
}

void ReplyWriter::push(size_t n) {
  header(version_ == RespVersion::kResp3 ? '>' : '*', static_cast<int64_t>(n));
}

std::string_view double_text(double d, char (&buf)[32]) {
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  return format_double(d, buf);
}

void ReplyWriter::double_bulk(double d) {
  char buf[32];
  bulk(double_text(d, buf));
}

void ReplyWriter::double_value(double d) {
  char buf[32];
  const std::string_view text = double_text(d, buf);
  if (version_ == RespVersion::kResp3) {
    std::string& out = *out_;
    out.push_back(',');
    out.append(text);
    out.append(reply::kCrlf);
  } else {
    bulk(text);
  }
}

void ReplyWriter::boolean(bool b) {
  if (version_ == RespVersion::kResp3) {
    out_->append(b ? "#t\r\n" : "#f\r\n");
  } else {
    out_->append(b ? reply::kOne : reply::kZero);
  }
}

void ReplyWriter::verbatim(std::string_view s, std::string_view format) {
  if (version_ != RespVersion::kResp3) {
    bulk(s);
    return;
  }
  // "=len\r\nfmt:" where fmt is exactly three bytes, space-padded, as addReplyVerbatim.
  header('=', static_cast<int64_t>(s.size() + 4));
  std::string& out = *out_;
  for (size_t i = 0; i < 3; ++i) out.push_back(i < format.size() ? format[i] : ' ');
  out.push_back(':');
  out.append(s);
  out.append(reply::kCrlf);
}

void ReplyWriter::raw(std::string_view resp) { out_->append(resp); }

size_t ReplyWriter::begin_deferred() { return out_->size(); }

void ReplyWriter::end_deferred_array(size_t token, size_t n) {
  end_deferred(token, '*', static_cast<int64_t>(n));
}

void ReplyWriter::end_deferred_map(size_t token, size_t n) {
  if (version_ == RespVersion::kResp3) {
    end_deferred(token, '%', static_cast<int64_t>(n));
  } else {
    end_deferred(token, '*', static_cast<int64_t>(2 * n));
  }
}

void ReplyWriter::end_deferred_set(size_t token, size_t n) {
  end_deferred(token, version_ == RespVersion::kResp3 ? '~' : '*', static_cast<int64_t>(n));
}

void ReplyWriter::header(char type, int64_t n) {
  char buf[kMaxHeaderLen];
  out_->append(buf, encode_header(type, n, buf));
}

void ReplyWriter::end_deferred(size_t token, char type, int64_t n) {
  assert(token <= out_->size());
  char buf[kMaxHeaderLen];
  out_->insert(token, buf, encode_header(type, n, buf));
}

}  // namespace ringkv::protocol
