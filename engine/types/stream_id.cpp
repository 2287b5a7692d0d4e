// Stream ID text forms (see stream_id.h).
#include "engine/types/stream_id.h"

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>

#include "engine/commands/string_ops.h"

namespace ringkv::engine {

std::string format_stream_id(StreamID id) {
  char buf[48];
  char* p = std::to_chars(buf, buf + 24, id.ms).ptr;
  *p++ = '-';
  p = std::to_chars(p, buf + sizeof(buf), id.seq).ptr;
  return std::string(buf, static_cast<size_t>(p - buf));
}

bool increment_stream_id(StreamID& id) {
  if (id.seq != UINT64_MAX) {
    ++id.seq;
    return true;
  }
  if (id.ms == UINT64_MAX) {
    id = kMinStreamID;
    return false;
  }
  ++id.ms;
  id.seq = 0;
  return true;
}

bool decrement_stream_id(StreamID& id) {
  if (id.seq != 0) {
    --id.seq;
    return true;
  }
  if (id.ms == 0) {
    id = kMaxStreamID;
    return false;
  }
  --id.ms;
  id.seq = UINT64_MAX;
  return true;
}

bool parse_uint64_like_redis(std::string_view text, uint64_t& out) {
  // Redis works on the C string: an embedded NUL ends it.
  const std::string s(text.substr(0, std::min(text.find('\0'), text.size())));
  int64_t ll = 0;
  if (parse_int64(s, ll)) {
    if (ll < 0) return false;
    out = static_cast<uint64_t>(ll);
    return true;
  }
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (errno == EINVAL || errno == ERANGE || s.empty() || *end != '\0') return false;
  out = v;
  return true;
}

std::optional<ParsedStreamID> parse_stream_id(std::string_view text, StreamIDSyntax syntax) {
  // Redis copies the argument into a 128-byte buffer and reads it as a C string.
  if (text.size() > 127) return std::nullopt;
  std::string buf(text.substr(0, std::min(text.find('\0'), text.size())));
  if (syntax.strict && (buf == "-" || buf == "+")) return std::nullopt;
  ParsedStreamID out;
  if (buf == "-") return ParsedStreamID{kMinStreamID, true};
  if (buf == "+") return ParsedStreamID{kMaxStreamID, true};
  const size_t dash = buf.find('-');
  const std::string_view whole(buf);
  if (!parse_uint64_like_redis(whole.substr(0, dash), out.id.ms)) return std::nullopt;
  if (dash == std::string::npos) {
    out.id.seq = syntax.missing_seq;
    return out;
  }
  const std::string_view seq = whole.substr(dash + 1);
  if (syntax.allow_auto_seq && seq == "*") {
    out.id.seq = 0;
    out.seq_given = false;
    return out;
  }
  if (!parse_uint64_like_redis(seq, out.id.seq)) return std::nullopt;
  return out;
}

}  // namespace ringkv::engine
