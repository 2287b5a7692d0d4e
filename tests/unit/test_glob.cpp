// Unit tests for glob_match: Redis's stringmatchlen() semantics, including its corner cases for
// malformed patterns and its protection against pathological ones.
#include <doctest/doctest.h>

#include <string>

#include "common/glob.h"

using ringkv::common::glob_match;

TEST_CASE("literal patterns match only themselves") {
  CHECK(glob_match("foo", "foo"));
  CHECK_FALSE(glob_match("foo", "fo"));
  CHECK_FALSE(glob_match("foo", "fooo"));
  CHECK_FALSE(glob_match("foo", "Foo"));
  CHECK(glob_match("", ""));
  CHECK_FALSE(glob_match("", "a"));
  CHECK_FALSE(glob_match("a", ""));
}

TEST_CASE("star matches any run of bytes") {
  CHECK(glob_match("*", ""));
  CHECK(glob_match("*", "anything"));
  CHECK(glob_match("foo*", "foo"));
  CHECK(glob_match("foo*", "foobar"));
  CHECK(glob_match("*bar", "foobar"));
  CHECK(glob_match("f*r", "foobar"));
  CHECK(glob_match("*o*", "foobar"));
  CHECK_FALSE(glob_match("*x*", "foobar"));
  CHECK(glob_match("a**b", "ab"));
  CHECK(glob_match("a**b", "axxb"));
  CHECK(glob_match("foo**", "foo"));
  // Only a lone "*" is the every-key fast path; stringmatchlen itself needs one byte to start.
  CHECK_FALSE(glob_match("**", ""));
  CHECK_FALSE(glob_match("*a", ""));
}

TEST_CASE("question mark matches exactly one byte") {
  CHECK(glob_match("h?llo", "hello"));
  CHECK(glob_match("h?llo", "hallo"));
  CHECK_FALSE(glob_match("h?llo", "hllo"));
  CHECK_FALSE(glob_match("h?llo", "heello"));
  CHECK(glob_match("???", "abc"));
  CHECK_FALSE(glob_match("???", "ab"));
  CHECK(glob_match("?", std::string(1, '\0')));
}

TEST_CASE("sets, negated sets and ranges") {
  CHECK(glob_match("h[ae]llo", "hello"));
  CHECK(glob_match("h[ae]llo", "hallo"));
  CHECK_FALSE(glob_match("h[ae]llo", "hillo"));
  CHECK(glob_match("h[^e]llo", "hallo"));
  CHECK_FALSE(glob_match("h[^e]llo", "hello"));
  CHECK(glob_match("h[a-b]llo", "hbllo"));
  CHECK_FALSE(glob_match("h[a-b]llo", "hcllo"));
  // Reversed ranges are swapped, not empty.
  CHECK(glob_match("[z-a]", "m"));
  CHECK(glob_match("[9-0]x", "5x"));
  CHECK(glob_match("[^a-c]", "d"));
  CHECK_FALSE(glob_match("[^a-c]", "b"));
  // "x-]" is read as the range x..']' (a range is taken whenever two bytes follow the '-').
  CHECK_FALSE(glob_match("[a-]", "-"));
  CHECK(glob_match("[a-]", "^"));
  CHECK(glob_match("[ab-]", "b"));
  CHECK_FALSE(glob_match("[ab-]", "-"));
  CHECK(glob_match("[-a]", "-"));
  // ']' closes the set, so "[]" is an empty set that matches nothing.
  CHECK_FALSE(glob_match("[]", "]"));
  CHECK_FALSE(glob_match("[]a", "a"));
  CHECK(glob_match("[^]", "x"));
}

TEST_CASE("backslash escapes the next byte") {
  CHECK(glob_match("\\*", "*"));
  CHECK_FALSE(glob_match("\\*", "a"));
  CHECK(glob_match("\\?", "?"));
  CHECK_FALSE(glob_match("\\?", "x"));
  CHECK(glob_match("\\[a]", "[a]"));
  CHECK(glob_match("a\\\\b", "a\\b"));
  CHECK(glob_match("[\\]]", "]"));
  CHECK(glob_match("[\\-]", "-"));
  CHECK(glob_match("[a\\-z]", "-"));
  CHECK_FALSE(glob_match("[a\\-z]", "m"));
  // A trailing backslash is a literal backslash.
  CHECK(glob_match("a\\", "a\\"));
  CHECK_FALSE(glob_match("a\\", "a"));
}

TEST_CASE("malformed sets behave as in Redis") {
  // An unterminated set still consumes one byte.
  CHECK(glob_match("[abc", "a"));
  CHECK_FALSE(glob_match("[abc", "d"));
  CHECK(glob_match("[^", "x"));
  CHECK_FALSE(glob_match("[", "["));
  CHECK_FALSE(glob_match("[", "a"));
  CHECK_FALSE(glob_match("a[", "a"));
  CHECK(glob_match("[\\", "\\"));
  CHECK(glob_match("x[a-", "x-"));
}

TEST_CASE("nocase folds ASCII letters only") {
  CHECK(glob_match("FOO*", "foobar", true));
  CHECK(glob_match("h[A-Z]llo", "hello", true));
  CHECK(glob_match("h[a-z]llo", "HELLO", true));
  CHECK(glob_match("[^A]", "b", true));
  CHECK_FALSE(glob_match("[^A]", "a", true));
  CHECK_FALSE(glob_match("FOO*", "foobar", false));
  // Escaped set members are compared case-sensitively even with nocase, as in Redis.
  CHECK_FALSE(glob_match("[\\A]", "a", true));
  CHECK(glob_match("\\A", "a", true));
}

TEST_CASE("bytes above 0x7f compare as Redis's signed chars do") {
  const std::string hi = "\x80";
  const std::string ff = "\xff";
  CHECK(glob_match(hi, hi));
  CHECK(glob_match("?", ff));
  // Signed: 0x80 (-128) sorts below 'a', so [\x80-a] covers every ASCII byte up to 'a'.
  CHECK(glob_match("[\x80-a]", "*"));
  CHECK_FALSE(glob_match("[\x80-a]", "b"));
  // Under nocase the ends are folded after ordering them, and glibc's tolower maps -128 to 128,
  // above 'a': the range becomes empty.
  CHECK_FALSE(glob_match("[\x80-a]", "*", true));
  CHECK_FALSE(glob_match("[\x80-a]", "b", true));
}

TEST_CASE("embedded NUL bytes are ordinary bytes") {
  const std::string key("a\0b", 3);
  CHECK(glob_match("a?b", key));
  CHECK(glob_match(std::string("a\0*", 3), key));
  CHECK_FALSE(glob_match("a", key));
}

TEST_CASE("Redis regression: long nested star loops finish quickly") {
  const std::string key(50, 'a');
  CHECK_FALSE(glob_match("a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", key));
  CHECK(glob_match("a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a", key));
}

TEST_CASE("Redis regression: very deep patterns hit the nesting limit instead of the stack") {
  std::string pattern;
  for (int i = 0; i < 50000; ++i) pattern += "*?";
  CHECK_FALSE(glob_match(pattern, std::string(50000, 'a')));
  // Within the limit the same shape still matches.
  std::string shallow;
  for (int i = 0; i < 100; ++i) shallow += "*?";
  CHECK(glob_match(shallow, std::string(200, 'a')));
}
