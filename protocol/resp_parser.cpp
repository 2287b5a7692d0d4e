// RespParser: Redis 7.0's request parsing (networking.c) rebuilt as an incremental parser over a
// caller-owned buffer. Redis quirks kept on purpose, because clients see them:
//  - line ends are found with strchr on a NUL-terminated buffer, so a NUL byte before the line's
//    '\r' (multibulk) or '\n' (inline) hides it: the request never completes and only the 64KB
//    line limit can end it;
//  - the byte after a header's '\r' and the two bytes after a bulk are skipped, never checked;
//  - numbers follow string2ll: no '+', no leading zeros, no "-0", at most 20 characters.
#include "protocol/resp_parser.h"

#include <algorithm>
#include <cassert>
#include <climits>
#include <cstring>
#include <optional>

#include "common/numbers.h"
#include "protocol/errors.h"

namespace ringkv::protocol {
namespace {

// Redis's string2ll, as used for "*N" and "$len".
bool string_to_ll(const char* s, size_t len, int64_t& value) {
  // The lengths every request carries are 1 to 9 plain digits: read at once.
  if (len - 1 < 9 && (s[0] != '0' || len == 1)) {
    int64_t n = 0;
    size_t i = 0;
    for (; i < len; ++i) {
      const auto digit = static_cast<unsigned>(static_cast<unsigned char>(s[i]) - '0');
      if (digit > 9) break;
      n = n * 10 + digit;
    }
    if (i == len) {
      value = n;
      return true;
    }
  }
  std::optional<int64_t> v = common::parse_integer(std::string_view(s, len));
  if (v) value = *v;
  return v.has_value();
}

// isspace() in the C locale, which Redis's sdssplitargs uses between arguments.
bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

bool is_hex_digit(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

int hex_digit_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

}  // namespace

ParseResult RespParser::parse(std::span<const char> in, std::vector<std::string_view>& argv) {
  argv.clear();
  bulk_hint_ = 0;
  assert(in.size() >= pos_ && "parse() must see the same bytes again, plus more");
  if (!in_request_) {
    if (in.empty()) return {ParseStatus::kIncomplete, 0, {}};
    // A huge earlier request should not pin its bookkeeping for the connection's whole life;
    // trimmed only now because the previous argv may point into inline_args_ until this call.
    constexpr size_t kKeepArgs = 1024;
    if (args_.capacity() > kKeepArgs) std::vector<ArgRef>().swap(args_);
    if (inline_args_.size() > kKeepArgs) inline_args_.resize(kKeepArgs);
    if (!unauthenticated_) {
      if (const size_t consumed = scan_plain_request(in, limits_, argv)) {
        return {ParseStatus::kComplete, consumed, {}};
      }
    }
    in_request_ = true;
    multibulk_ = in[0] == '*';
  }
  return multibulk_ ? parse_multibulk(in, argv) : parse_inline(in, argv);
}

void RespParser::reset() {
  in_request_ = false;
  multibulk_ = false;
  header_done_ = false;
  multibulk_len_ = 0;
  bulk_len_ = -1;
  pos_ = 0;
  scan_pos_ = 0;
  line_blocked_ = false;
  args_.clear();
  bulk_hint_ = 0;
}

RespParser::LineScan RespParser::not_found(std::span<const char> in, size_t line_start) const {
  return in.size() - line_start > limits_.max_inline_len ? LineScan::kTooBig : LineScan::kNotYet;
}

bool RespParser::has_nul(std::span<const char> in, size_t from, size_t to) {
  if (std::memchr(in.data() + from, '\0', to - from) == nullptr) return false;
  line_blocked_ = true;
  return true;
}

RespParser::LineScan RespParser::find_line_end(std::span<const char> in, size_t line_start,
                                               char delim, size_t& end) {
  if (line_blocked_) return not_found(in, line_start);
  const size_t from = scan_pos_ > line_start ? scan_pos_ : line_start;
  const void* hit = std::memchr(in.data() + from, delim, in.size() - from);
  if (hit == nullptr) {
    scan_pos_ = in.size();
    return not_found(in, line_start);
  }
  end = static_cast<size_t>(static_cast<const char*>(hit) - in.data());
  scan_pos_ = end;
  return LineScan::kFound;
}

ParseResult RespParser::complete(std::span<const char> in, std::vector<std::string_view>& argv,
                                 size_t consumed) {
  for (const ArgRef& arg : args_) {
    if (arg.owned) {
      argv.emplace_back(inline_args_[arg.offset]);
    } else {
      argv.emplace_back(in.data() + arg.offset, arg.length);
    }
  }
  reset();
  return {ParseStatus::kComplete, consumed, {}};
}

ParseResult RespParser::fail(std::string_view error) {
  reset();
  return {ParseStatus::kError, 0, error};
}

bool RespParser::header_line(std::span<const char> in, size_t from, std::string_view too_big,
                             size_t& cr, ParseResult& wait) {
  wait = ParseResult{ParseStatus::kIncomplete, 0, {}};
  switch (find_line_end(in, from, '\r', cr)) {
    case LineScan::kNotYet:
      return false;
    case LineScan::kTooBig:
      wait = fail(too_big);
      return false;
    case LineScan::kFound:
      break;
  }
  // Redis wants one more byte after '\r' (the '\n', though it never looks at it).
  if (cr + 1 >= in.size()) {
    if (has_nul(in, from, cr) && not_found(in, from) == LineScan::kTooBig) wait = fail(too_big);
    return false;
  }
  return true;
}

ParseResult RespParser::parse_multibulk(std::span<const char> in,
                                        std::vector<std::string_view>& argv) {
  const char* data = in.data();
  const size_t size = in.size();
  constexpr ParseResult kIncomplete{ParseStatus::kIncomplete, 0, {}};

  if (!header_done_) {
    size_t cr = 0;
    ParseResult wait;
    if (!header_line(in, 0, err::kProtoBigMultibulkCount, cr, wait)) return wait;
    int64_t count = 0;
    if (!string_to_ll(data + 1, cr - 1, count) || count > limits_.max_multibulk_len) {
      if (has_nul(in, 0, cr)) {
        return not_found(in, 0) == LineScan::kTooBig ? fail(err::kProtoBigMultibulkCount)
                                                     : kIncomplete;
      }
      return fail(err::kProtoInvalidMultibulk);
    }
    if (unauthenticated_ && count > kUnauthMaxMultibulkLen) {
      return fail(err::kProtoUnauthMultibulk);
    }
    pos_ = cr + 2;
    if (count <= 0) return complete(in, argv, pos_);
    header_done_ = true;
    multibulk_len_ = count;
  }

  while (multibulk_len_ > 0) {
    if (bulk_len_ < 0) {
      size_t cr = 0;
      ParseResult wait;
      if (!header_line(in, pos_, err::kProtoBigBulkCount, cr, wait)) return wait;
      int64_t len = 0;
      const bool valid = data[pos_] == '$' && string_to_ll(data + pos_ + 1, cr - pos_ - 1, len) &&
                         len >= 0 && static_cast<uint64_t>(len) <= limits_.max_bulk_len;
      if (!valid) {
        if (has_nul(in, pos_, cr)) {
          return not_found(in, pos_) == LineScan::kTooBig ? fail(err::kProtoBigBulkCount)
                                                          : kIncomplete;
        }
        if (data[pos_] != '$') {
          // Redis formats the byte with %c and then blanks CR and LF.
          const char got = data[pos_] == '\r' || data[pos_] == '\n' ? ' ' : data[pos_];
          error_.assign(err::kProtoExpectedDollar);
          error_.push_back(got);
          error_.push_back('\'');
          return fail(error_);
        }
        return fail(err::kProtoInvalidBulk);
      }
      if (unauthenticated_ && len > kUnauthMaxBulkLen) return fail(err::kProtoUnauthBulk);
      pos_ = cr + 2;
      bulk_len_ = len;
    }
    const size_t need = static_cast<size_t>(bulk_len_) + 2;
    if (size - pos_ < need) {
      bulk_hint_ = need - (size - pos_);
      return kIncomplete;
    }
    args_.push_back({pos_, static_cast<size_t>(bulk_len_), false});
    pos_ += need;
    bulk_len_ = -1;
    --multibulk_len_;
  }
  return complete(in, argv, pos_);
}

ParseResult RespParser::parse_inline(std::span<const char> in,
                                     std::vector<std::string_view>& argv) {
  size_t newline = 0;
  switch (find_line_end(in, 0, '\n', newline)) {
    case LineScan::kNotYet:
      return {ParseStatus::kIncomplete, 0, {}};
    case LineScan::kTooBig:
      return fail(err::kProtoBigInline);
    case LineScan::kFound:
      break;
  }
  if (has_nul(in, 0, newline)) {
    if (not_found(in, 0) == LineScan::kTooBig) return fail(err::kProtoBigInline);
    return {ParseStatus::kIncomplete, 0, {}};
  }
  const size_t line_len = newline > 0 && in[newline - 1] == '\r' ? newline - 1 : newline;
  return split_inline(in.first(line_len), argv, newline + 1);
}

// sdssplitargs over a line that holds no NUL: past its end reads as '\0', as in the C original.
ParseResult RespParser::split_inline(std::span<const char> line,
                                     std::vector<std::string_view>& argv, size_t consumed) {
  const char* s = line.data();
  const size_t len = line.size();
  auto at = [s, len](size_t i) { return i < len ? s[i] : '\0'; };
  size_t owned_count = 0;
  size_t p = 0;
  while (true) {
    while (p < len && is_space(s[p])) ++p;
    if (p >= len) break;
    bool in_double = false;
    bool in_single = false;
    bool done = false;
    const size_t start = p;
    size_t end = p;
    std::string* owned = nullptr;
    // A token is a view of the line until a quote makes it need unescaping.
    auto make_owned = [&] {
      if (owned_count == inline_args_.size()) inline_args_.emplace_back();
      owned = &inline_args_[owned_count++];
      owned->assign(s + start, p - start);
    };
    while (!done) {
      const char c = at(p);
      if (in_double) {
        if (c == '\\' && at(p + 1) == 'x' && is_hex_digit(at(p + 2)) && is_hex_digit(at(p + 3))) {
          owned->push_back(
              static_cast<char>(hex_digit_value(at(p + 2)) * 16 + hex_digit_value(at(p + 3))));
          p += 3;
        } else if (c == '\\' && at(p + 1) != '\0') {
          ++p;
          char unescaped = s[p];
          switch (s[p]) {
            case 'n':
              unescaped = '\n';
              break;
            case 'r':
              unescaped = '\r';
              break;
            case 't':
              unescaped = '\t';
              break;
            case 'b':
              unescaped = '\b';
              break;
            case 'a':
              unescaped = '\a';
              break;
            default:
              break;
          }
          owned->push_back(unescaped);
        } else if (c == '"') {
          // The closing quote must be followed by a space or nothing at all.
          if (at(p + 1) != '\0' && !is_space(at(p + 1))) return fail(err::kProtoUnbalancedQuotes);
          done = true;
        } else if (c == '\0') {
          return fail(err::kProtoUnbalancedQuotes);
        } else {
          owned->push_back(c);
        }
      } else if (in_single) {
        if (c == '\\' && at(p + 1) == '\'') {
          ++p;
          owned->push_back('\'');
        } else if (c == '\'') {
          if (at(p + 1) != '\0' && !is_space(at(p + 1))) return fail(err::kProtoUnbalancedQuotes);
          done = true;
        } else if (c == '\0') {
          return fail(err::kProtoUnbalancedQuotes);
        } else {
          owned->push_back(c);
        }
      } else {
        switch (c) {
          case ' ':
          case '\n':
          case '\r':
          case '\t':
          case '\0':
            end = p;
            done = true;
            break;
          case '"':
          case '\'':
            if (owned == nullptr) make_owned();
            (c == '"' ? in_double : in_single) = true;
            break;
          default:
            if (owned != nullptr) owned->push_back(c);
            break;
        }
      }
      if (at(p) != '\0') ++p;
    }
    if (owned != nullptr) {
      args_.push_back({owned_count - 1, 0, true});
    } else {
      args_.push_back({start, end - start, false});
    }
  }
  return complete(line, argv, consumed);
}

size_t scan_plain_request(std::span<const char> in, const ParseLimits& limits,
                          std::vector<std::string_view>& argv) {
  const char* const data = in.data();
  const size_t size = in.size();
  size_t pos = 0;
  // "<lead><digits>\r" and one more byte at `pos`: its number, `pos` moved past them.
  auto header = [&](char lead, uint64_t& n) {
    if (pos >= size || data[pos] != lead) return false;
    const size_t digits = pos + 1;
    size_t p = digits;
    n = 0;
    for (; p < size && p - digits < 10; ++p) {
      const auto digit = static_cast<unsigned>(static_cast<unsigned char>(data[p]) - '0');
      if (digit > 9) break;
      n = n * 10 + digit;
    }
    const size_t len = p - digits;
    if (len == 0 || len > 9 || (len > 1 && data[digits] == '0')) return false;
    if (p + 1 >= size || data[p] != '\r') return false;
    pos = p + 2;
    return true;
  };
  const size_t before = argv.size();
  uint64_t count = 0;
  bool plain = header('*', count) && count > 0 &&
               count <= static_cast<uint64_t>(std::max<int64_t>(0, limits.max_multibulk_len));
  for (uint64_t i = 0; plain && i < count; ++i) {
    uint64_t len = 0;
    plain = header('$', len) && len <= limits.max_bulk_len && size - pos >= len + 2;
    if (plain) argv.emplace_back(data + pos, len);
    pos += len + 2;
  }
  if (plain) return pos;
  argv.resize(before);
  return 0;
}

}  // namespace ringkv::protocol
