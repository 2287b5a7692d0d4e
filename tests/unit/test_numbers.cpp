// Number parsing with Redis's rules: string2ll integers and memtoull sizes.
#include <doctest/doctest.h>

#include <cstdint>

#include "common/numbers.h"

using ringkv::common::parse_integer;
using ringkv::common::parse_memory;

TEST_CASE("integer parsing follows Redis's string2ll") {
  CHECK(parse_integer("0") == 0);
  CHECK(parse_integer("-5") == -5);
  CHECK(parse_integer("9223372036854775807") == INT64_MAX);
  CHECK(parse_integer("-9223372036854775808") == INT64_MIN);
  CHECK_FALSE(parse_integer("9223372036854775808"));
  CHECK_FALSE(parse_integer("-9223372036854775809"));
  CHECK_FALSE(parse_integer("18446744073709551616"));
  CHECK_FALSE(parse_integer("99999999999999999999"));
  // Around the 18 digits read without overflow checks.
  CHECK(parse_integer("999999999999999999") == 999999999999999999);
  CHECK(parse_integer("-999999999999999999") == -999999999999999999);
  CHECK(parse_integer("1000000000000000000") == 1000000000000000000);
  CHECK(parse_integer("-1000000000000000000") == -1000000000000000000);
  CHECK_FALSE(parse_integer("99999999999999999a"));
  CHECK_FALSE(parse_integer("12/4"));
  CHECK_FALSE(parse_integer("1:"));
  CHECK_FALSE(parse_integer(""));
  CHECK_FALSE(parse_integer("-"));
  CHECK_FALSE(parse_integer("-0"));
  CHECK_FALSE(parse_integer("05"));
  CHECK_FALSE(parse_integer("+5"));
  CHECK_FALSE(parse_integer(" 5"));
  CHECK_FALSE(parse_integer("5.0"));
  CHECK_FALSE(parse_integer("1e3"));
  CHECK_FALSE(parse_integer("0x10"));
}

TEST_CASE("unsigned parsing refuses what is negative or not an integer") {
  using ringkv::common::parse_unsigned;
  CHECK(parse_unsigned("0") == 0u);
  CHECK(parse_unsigned("9223372036854775807") == 9223372036854775807u);
  CHECK_FALSE(parse_unsigned("-1").has_value());
  CHECK_FALSE(parse_unsigned("9223372036854775808").has_value());
  CHECK_FALSE(parse_unsigned("").has_value());
  CHECK_FALSE(parse_unsigned("01").has_value());
}

TEST_CASE("size parsing follows Redis's memtoull") {
  CHECK(parse_memory("100") == 100);
  CHECK(parse_memory("100b") == 100);
  CHECK(parse_memory("1k") == 1000);
  CHECK(parse_memory("1kb") == 1024);
  CHECK(parse_memory("1KB") == 1024);
  CHECK(parse_memory("2m") == 2000000);
  CHECK(parse_memory("512mb") == 536870912);
  CHECK(parse_memory("1Mb") == 1048576);
  CHECK(parse_memory("1g") == 1000000000);
  CHECK(parse_memory("1gb") == 1073741824);
  CHECK(parse_memory("00001mb") == 1048576);
  CHECK(parse_memory("") == 0);
  CHECK(parse_memory("mb") == 0);
  CHECK(parse_memory("99999999999999999999") == UINT64_MAX);
  CHECK_FALSE(parse_memory("99999999999999999999mb"));
  CHECK_FALSE(parse_memory("1.5mb"));
  CHECK_FALSE(parse_memory("-1"));
  CHECK_FALSE(parse_memory("+1mb"));
  CHECK_FALSE(parse_memory(" 1mb"));
  CHECK_FALSE(parse_memory("1 mb"));
  CHECK_FALSE(parse_memory("1t"));
  CHECK_FALSE(parse_memory("1mbb"));
}

TEST_CASE("words are split on runs of spaces") {
  using ringkv::common::split_words;
  using Words = std::vector<std::string_view>;
  CHECK(split_words("") == Words{});
  CHECK(split_words("   ") == Words{});
  CHECK(split_words("member a:1 2") == Words{"member", "a:1", "2"});
  CHECK(split_words("  two   spaced ") == Words{"two", "spaced"});
}

TEST_CASE("doubles convert to integers as x86-64's casts do") {
  using ringkv::common::x86_to_int64;
  using ringkv::common::x86_to_uint64;
  CHECK(x86_to_int64(2.9) == 2);
  CHECK(x86_to_int64(-2.9) == -2);
  CHECK(x86_to_int64(-9223372036854775808.0) == INT64_MIN);
  CHECK(x86_to_int64(9.3e18) == INT64_MIN);
  CHECK(x86_to_int64(-9.3e18) == INT64_MIN);
  CHECK(x86_to_int64(0.0 / 0.0) == INT64_MIN);
  CHECK(x86_to_int64(1.0 / 0.0) == INT64_MIN);
  CHECK(x86_to_uint64(9.3e18) == 9300000000000000000ULL);
  CHECK(x86_to_uint64(-1.0) == UINT64_MAX);
  CHECK(x86_to_uint64(1e20) == 0);  // 1e20 - 2^63 does not fit either: INT64_MIN, top bit flipped
}
