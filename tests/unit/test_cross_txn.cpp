// Unit tests for merging a cross-node transaction's parts back into one EXEC array: elements of
// any shape (nested arrays, errors, nulls, RESP3 maps) land at their commands' positions.
#include <doctest/doctest.h>

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cluster/cross_txn.h"

using ringkv::cluster::interleave_replies;
using ringkv::cluster::split_array;

TEST_CASE("split_array cuts an array reply into its elements' bytes") {
  std::vector<std::string_view> e;
  REQUIRE(split_array("*3\r\n+OK\r\n*2\r\n$1\r\na\r\n$-1\r\n-ERR x\r\n", e));
  REQUIRE(e.size() == 3);
  CHECK(e[0] == "+OK\r\n");
  CHECK(e[1] == "*2\r\n$1\r\na\r\n$-1\r\n");
  CHECK(e[2] == "-ERR x\r\n");
  REQUIRE(split_array("*0\r\n", e));
  CHECK(e.empty());
  CHECK_FALSE(split_array("-ERR no\r\n", e));
  CHECK_FALSE(split_array("*2\r\n+OK\r\n", e));  // cut short
  CHECK_FALSE(split_array("*1\r\n+OK\r\n+extra\r\n", e));
  REQUIRE(split_array("*1\r\n%1\r\n+f\r\n:1\r\n", e));
  CHECK(e[0] == "%1\r\n+f\r\n:1\r\n");
}

TEST_CASE("interleave_replies puts each part's replies at their commands' positions") {
  const std::vector<std::string> parts{"*2\r\n+OK\r\n:2\r\n", "*1\r\n$1\r\nv\r\n",
                                       "*2\r\n-ERR bad\r\n*-1\r\n"};
  const std::vector<std::vector<size_t>> positions{{0, 3}, {1}, {4, 2}};
  CHECK(interleave_replies(parts, positions, 5) ==
        "*5\r\n+OK\r\n$1\r\nv\r\n*-1\r\n:2\r\n-ERR bad\r\n");
}

TEST_CASE("interleave_replies refuses a part that does not match its commands") {
  CHECK(interleave_replies({"*1\r\n+OK\r\n"}, {{0, 1}}, 2).empty());
  CHECK(interleave_replies({"-ERR x\r\n"}, {{0}}, 1).empty());
  CHECK(interleave_replies({"*1\r\n+OK\r\n"}, {{3}}, 2).empty());
  // A position no part fills.
  CHECK(interleave_replies({"*1\r\n+OK\r\n"}, {{0}}, 2).empty());
}

TEST_CASE("interleave_replies merges the fragments of a split command at its position") {
  // Position 1 is answered by parts 0 and 2 (a split command), the others by one part each.
  const std::vector<std::string> parts{"*2\r\n+OK\r\n:2\r\n", "*1\r\n$1\r\nv\r\n", "*1\r\n:3\r\n"};
  const std::vector<std::vector<size_t>> positions{{0, 1}, {2}, {1}};
  std::vector<std::pair<size_t, std::string>> seen;
  auto merge = [&](size_t position,
                   std::span<const std::pair<size_t, std::string_view>> fragments) {
    CHECK(position == 1);
    for (const auto& [part, reply] : fragments) seen.emplace_back(part, std::string(reply));
    return std::string(":5\r\n");
  };
  CHECK(interleave_replies(parts, positions, 3, merge) == "*3\r\n+OK\r\n:5\r\n$1\r\nv\r\n");
  CHECK(seen == std::vector<std::pair<size_t, std::string>>{{0, ":2\r\n"}, {2, ":3\r\n"}});
  // Without a merge, a position answered twice is malformed.
  CHECK(interleave_replies(parts, positions, 3).empty());
}
