// Glob matching: a faithful port of Redis's stringmatchlen() (util.c, Redis 7.0).
//
// Redis reads its NUL-terminated sds strings one byte past the end in a few places (after a
// trailing `*`, an unterminated `[`); here `pattern_at` returns '\0' past the end so malformed
// patterns behave exactly as they do in Redis without reading out of bounds.
#include "common/glob.h"

#include <cstddef>
#include <utility>

namespace ringkv::common {
namespace {

// Redis stops recursing at this depth and reports no match (CVE-2022-36021 hardening).
constexpr int kMaxNesting = 1000;

// tolower() as glibc computes it in the C locale, which Redis keeps for LC_CTYPE. Redis passes
// plain (signed) chars: glibc maps -128..-2 to 128..254 and leaves -1 (EOF) alone, which changes
// the outcome of case-insensitive ranges over bytes >= 0x80, so it is reproduced here.
int fold(int c) {
  if (c >= 'A' && c <= 'Z') return c - 'A' + 'a';
  if (c < -1) return c + 256;
  return c;
}

class Matcher {
 public:
  Matcher(std::string_view pattern, std::string_view str, bool nocase)
      : pattern_(pattern), str_(str), nocase_(nocase) {}

  // Matches pattern_[p..] against str_[s..]. Mirrors stringmatchlen_impl line by line so that
  // every corner case (ranges in either order, escapes inside sets, unterminated sets) agrees.
  bool match(size_t p, size_t s, int nesting) {
    if (nesting > kMaxNesting) return false;
    const size_t plen = pattern_.size();
    const size_t slen = str_.size();
    while (p < plen && s < slen) {
      switch (pattern_[p]) {
        case '*':
          while (p < plen && pattern_at(p + 1) == '*') ++p;
          if (p + 1 == plen) return true;
          for (; s < slen; ++s) {
            if (match(p + 1, s, nesting + 1)) return true;
            // A deeper `*` already failed on every suffix: longer matches here cannot help.
            if (skip_longer_) return false;
          }
          skip_longer_ = true;
          return false;
        case '?':
          ++s;
          break;
        case '[':
          if (!match_set(p, str_[s])) return false;
          ++s;
          break;
        case '\\':
          if (plen - p >= 2) ++p;
          [[fallthrough]];
        default:
          if (!same(pattern_[p], str_[s])) return false;
          ++s;
          break;
      }
      ++p;
      if (s == slen) {
        while (pattern_at(p) == '*') ++p;
        break;
      }
    }
    return p == plen && s == slen;
  }

 private:
  char pattern_at(size_t i) const { return i < pattern_.size() ? pattern_[i] : '\0'; }

  bool same(char a, char b) const { return nocase_ ? fold(a) == fold(b) : a == b; }

  // Matches one byte against the set opening at pattern_[p] == '['. Leaves p on the closing
  // `]` (or on the last pattern byte when the set is unterminated), as Redis does.
  bool match_set(size_t& p, char c) const {
    const size_t plen = pattern_.size();
    ++p;
    const bool negate = pattern_at(p) == '^';
    if (negate) ++p;
    bool matched = false;
    while (true) {
      if (pattern_at(p) == '\\' && plen - p >= 2) {
        ++p;
        // Redis compares escaped set members case-sensitively even under nocase.
        if (pattern_[p] == c) matched = true;
      } else if (pattern_at(p) == ']') {
        break;
      } else if (p == plen) {
        --p;
        break;
      } else if (plen - p >= 3 && pattern_[p + 1] == '-') {
        // Plain char to int, as in Redis: bytes >= 0x80 order the same way they do there.
        int start = pattern_[p];
        int end = pattern_[p + 2];
        int ch = c;
        if (start > end) std::swap(start, end);
        if (nocase_) {
          start = fold(start);
          end = fold(end);
          ch = fold(ch);
        }
        p += 2;
        if (ch >= start && ch <= end) matched = true;
      } else if (same(pattern_[p], c)) {
        matched = true;
      }
      ++p;
    }
    return negate ? !matched : matched;
  }

  std::string_view pattern_;
  std::string_view str_;
  bool nocase_;
  bool skip_longer_ = false;
};

}  // namespace

bool glob_match(std::string_view pattern, std::string_view s, bool nocase) {
  // KEYS and SCAN treat a lone "*" as "every key", including the empty key, without matching.
  if (pattern.size() == 1 && pattern[0] == '*') return true;
  return Matcher(pattern, s, nocase).match(0, 0, 0);
}

}  // namespace ringkv::common
