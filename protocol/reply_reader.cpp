// ReplyReader: resumable framing and decoding of RESP2/RESP3 replies from peers.
#include "protocol/reply_reader.h"

#include <charconv>
#include <cstdint>
#include <cstring>

namespace ringkv::protocol {
namespace {

// Aggregates deeper than this are treated as malformed (a peer never nests this deep).
constexpr size_t kMaxDepth = 64;

bool parse_i64(const char* b, const char* e, int64_t& out) {
  auto r = std::from_chars(b, e, out);
  return r.ec == std::errc() && r.ptr == e;
}

// Elements an aggregate header announces (a map counts keys and values).
int64_t aggregate_elements(char type, int64_t n) {
  return (type == '%' || type == '|') ? n * 2 : n;
}

// A count of -1 (null) or more whose element total fits in int64_t; anything else is malformed.
bool parse_aggregate_count(const char* b, const char* e, int64_t& n) {
  return parse_i64(b, e, n) && n >= -1 && n <= INT64_MAX / 2;
}

// The fewest bytes an element can take ("_\r\n"): bounds what a header may announce.
constexpr size_t kMinElementBytes = 3;

bool is_aggregate(char t) { return t == '*' || t == '%' || t == '~' || t == '>' || t == '|'; }
bool is_blob(char t) { return t == '$' || t == '!' || t == '='; }

}  // namespace

void ReplyScanner::reset() {
  pos_ = 0;
  open_.clear();
}

ReplyScanner::Result ReplyScanner::scan(std::span<const char> in) {
  const char* base = in.data();
  const size_t size = in.size();
  while (true) {
    // A value completes every aggregate whose last element it was.
    if (pos_ > 0 && open_.empty()) {
      size_t len = pos_;
      reset();
      return {Status::kComplete, len};
    }
    if (pos_ >= size) return {Status::kIncomplete, 0};
    const char* line = base + pos_;
    const char* cr = static_cast<const char*>(std::memchr(line, '\r', size - pos_));
    if (cr == nullptr || cr + 1 >= base + size) return {Status::kIncomplete, 0};
    if (cr[1] != '\n') return {Status::kError, 0};
    char type = line[0];
    size_t after_line = static_cast<size_t>(cr - base) + 2;
    if (is_blob(type)) {
      int64_t n;
      if (!parse_i64(line + 1, cr, n) || n < -1) return {Status::kError, 0};
      if (n >= 0) {
        size_t need = after_line + static_cast<size_t>(n) + 2;
        if (need > size) return {Status::kIncomplete, 0};
        after_line = need;
      }
    } else if (is_aggregate(type)) {
      int64_t n;
      if (!parse_aggregate_count(line + 1, cr, n)) return {Status::kError, 0};
      pos_ = after_line;
      if (n > 0) {
        if (open_.size() >= kMaxDepth) return {Status::kError, 0};
        if (!open_.empty()) open_.back()--;
        open_.push_back(aggregate_elements(type, n));
        continue;
      }
    } else if (std::strchr("+-:_,#(", type) == nullptr || type == 0) {
      return {Status::kError, 0};
    }
    pos_ = after_line;
    if (!open_.empty()) open_.back()--;
    while (!open_.empty() && open_.back() == 0) open_.pop_back();
    if (open_.empty()) {
      size_t len = pos_;
      reset();
      return {Status::kComplete, len};
    }
  }
}

namespace {

bool decode_at(std::string_view in, size_t& pos, ReplyValue& out, size_t depth) {
  if (pos >= in.size() || depth > kMaxDepth) return false;
  size_t cr = in.find("\r\n", pos);
  if (cr == std::string_view::npos) return false;
  char type = in[pos];
  const char* b = in.data() + pos + 1;
  const char* e = in.data() + cr;
  out = ReplyValue{};
  out.type = type;
  pos = cr + 2;
  if (is_blob(type)) {
    int64_t n;
    if (!parse_i64(b, e, n) || n < -1) return false;
    if (n == -1) {
      out.null = true;
      return true;
    }
    if (pos + static_cast<size_t>(n) + 2 > in.size()) return false;
    out.text = in.substr(pos, static_cast<size_t>(n));
    pos += static_cast<size_t>(n) + 2;
    return true;
  }
  if (is_aggregate(type)) {
    int64_t n;
    if (!parse_aggregate_count(b, e, n)) return false;
    if (n == -1) {
      out.null = true;
      return true;
    }
    int64_t count = aggregate_elements(type, n);
    // Refuse before allocating: the elements announced must fit in the bytes that remain.
    if (static_cast<uint64_t>(count) > (in.size() - pos) / kMinElementBytes) return false;
    out.elements.resize(static_cast<size_t>(count));
    for (auto& el : out.elements) {
      if (!decode_at(in, pos, el, depth + 1)) return false;
    }
    return true;
  }
  switch (type) {
    case ':':
      return parse_i64(b, e, out.integer);
    case '#':
      out.integer = (e > b && *b == 't') ? 1 : 0;
      return true;
    case '_':
      out.null = true;
      return true;
    case '+':
    case '-':
    case ',':
    case '(':
      out.text = std::string_view(b, static_cast<size_t>(e - b));
      return true;
    default:
      return false;
  }
}

}  // namespace

bool decode_reply(std::string_view bytes, ReplyValue& out) {
  size_t pos = 0;
  return decode_at(bytes, pos, out, 0) && pos == bytes.size();
}

}  // namespace ringkv::protocol
