// Number parsing with Redis's exact rules, shared by the configuration, the RESP parser, the
// engine and the cluster: a value Redis accepts (in CONFIG SET, redis.conf, a SCAN cursor) is
// accepted here and a value it rejects is rejected here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ringkv::common {

// Parses a decimal int64 the way Redis's string2ll does: optional '-', no '+', no spaces, no
// leading zeros ("0" itself is fine, "-0" is not). Returns nullopt on anything else or overflow.
std::optional<int64_t> parse_integer(std::string_view text);
// The same, for a value that must not be negative.
std::optional<uint64_t> parse_unsigned(std::string_view text);

// A double converted to an integer as x86-64 code compiled from C does it (Redis's casts): the
// truncated value, or INT64_MIN when it does not fit or is NaN (cvttsd2si). The C++ cast is
// undefined there.
inline int64_t x86_to_int64(double d) {
  if (d >= -9223372036854775808.0 && d < 9223372036854775808.0) return static_cast<int64_t>(d);
  return INT64_MIN;
}
// The same for a double → unsigned 64-bit cast: below 2^63 the signed conversion; from 2^63 up,
// 2^63 is subtracted first and the top bit flipped back.
inline uint64_t x86_to_uint64(double d) {
  constexpr double kTwo63 = 9223372036854775808.0;
  if (!(d >= kTwo63)) return static_cast<uint64_t>(x86_to_int64(d));
  return static_cast<uint64_t>(x86_to_int64(d - kTwo63)) ^ (uint64_t{1} << 63);
}

// An argument as the C string Redis sees: cut at its first NUL byte (options, names).
inline std::string_view c_string(std::string_view arg) { return arg.substr(0, arg.find('\0')); }

// ASCII lowercase copy (the C locale's tolower).
inline std::string lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// ASCII case-insensitive equality (command names, options, units).
inline bool equals_ignore_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  // ASCII case folding, as strcasecmp in the C locale Redis runs in (and no locale lookups:
  // every command name and option goes through here).
  for (size_t i = 0; i < a.size(); ++i) {
    const unsigned char x = static_cast<unsigned char>(a[i]);
    const unsigned char y = static_cast<unsigned char>(b[i]);
    if (x == y) continue;
    if ((x | 0x20) != (y | 0x20) || (x | 0x20) < 'a' || (x | 0x20) > 'z') return false;
  }
  return true;
}

// The space-separated words of `line` (runs of spaces count as one; none at either end).
std::vector<std::string_view> split_words(std::string_view line);

// Parses a memory size the way Redis's memtoull does: digits followed by an optional unit b, k,
// kb, m, mb, g, gb (case-insensitive; k = 1000, kb = 1024, ...). No sign, no spaces, no
// fraction. Empty digits count as 0 ("" and "mb" give 0) and too many digits saturate at
// UINT64_MAX, as in Redis. Returns nullopt when the text is not a size or the number times its
// unit does not fit 64 bits.
std::optional<uint64_t> parse_memory(std::string_view text);

// Parses a SCAN cursor as Redis does with strtoul(): an optional sign, decimal digits, nothing
// after them, no leading space. An empty cursor reads as 0, and "-1" wraps to 2^64 - 1.
bool parse_scan_cursor(std::string_view arg, uint64_t& cursor);

}  // namespace ringkv::common
