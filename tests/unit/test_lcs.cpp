// The LCS computation (lcs.h), with results checked against redis-server 7.0.15's LCS replies.
#include <doctest/doctest.h>

#include <string>

#include "engine/types/lcs.h"

using namespace ringkv::engine;

TEST_CASE("LCS finds the subsequence and its ranges, last range first") {
  // LCS s1 s2 IDX WITHMATCHLEN with s1=ohmytext s2=mynewtext: len 6, matches [4-7]/[5-8] (4)
  // and [2-3]/[0-1] (2).
  const LcsResult r = lcs("ohmytext", "mynewtext", true);
  CHECK(r.length == 6);
  CHECK(r.subsequence == "mytext");
  REQUIRE(r.ranges.size() == 2);
  CHECK(r.ranges[0].a_start == 4);
  CHECK(r.ranges[0].a_end == 7);
  CHECK(r.ranges[0].b_start == 5);
  CHECK(r.ranges[0].b_end == 8);
  CHECK(r.ranges[0].length() == 4);
  CHECK(r.ranges[1].a_start == 2);
  CHECK(r.ranges[1].a_end == 3);
  CHECK(r.ranges[1].b_start == 0);
  CHECK(r.ranges[1].b_end == 1);
}

TEST_CASE("LCS of empty or disjoint strings is empty") {
  CHECK(lcs("", "abc", true).length == 0);
  CHECK(lcs("abc", "", true).ranges.empty());
  const LcsResult r = lcs("abc", "xyz", true);
  CHECK(r.length == 0);
  CHECK(r.subsequence.empty());
  CHECK(r.ranges.empty());
  // Without the walk only the length is computed.
  const LcsResult len_only = lcs("abcbdab", "bdcaba", false);
  CHECK(len_only.length == 4);
  CHECK(len_only.subsequence.empty());
}

TEST_CASE("ties resolve as Redis walks the table back") {
  // redis-server 7.0.15: SET a abcbdab, SET b bdcaba, LCS a b -> "bdab".
  CHECK(lcs("abcbdab", "bdcaba", true).subsequence == "bdab");
  CHECK(lcs_table_bytes(3, 4) == 4 * 5 * 4);
}
