// Unit tests for the per-key locks of cross-node transactions: all-or-nothing acquisition, owners
// never blocked by their own locks, release of everything an owner holds.
#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

#include "server/key_locks.h"

using ringkv::server::KeyLocks;

TEST_CASE("a part's keys are locked all at once or not at all") {
  KeyLocks locks;
  CHECK(locks.empty());
  const std::vector<std::string> ab{"a", "b"};
  const std::vector<std::string> bc{"b", "c"};
  REQUIRE(locks.try_lock(1, ab));
  CHECK(locks.holder("a") == 1);
  CHECK(locks.holder("b") == 1);
  CHECK(locks.holder("c") == KeyLocks::kNone);
  // b is taken: c is not locked either.
  CHECK_FALSE(locks.try_lock(2, bc));
  CHECK(locks.holder("c") == KeyLocks::kNone);
  CHECK_FALSE(locks.holds(2));
  CHECK(locks.size() == 2);
}

TEST_CASE("an owner is not blocked by its own locks and may lock a key twice") {
  KeyLocks locks;
  const std::vector<std::string> twice{"k", "k"};
  REQUIRE(locks.try_lock(7, twice));
  CHECK(locks.size() == 1);
  const std::vector<std::string_view> k{"k"};
  CHECK_FALSE(locks.blocked(7, k));
  CHECK(locks.blocked(8, k));
  const std::vector<std::string> more{"k", "m"};
  REQUIRE(locks.try_lock(7, more));
  CHECK(locks.holder("m") == 7);
  const std::vector<std::string_view> other{"x", "y"};
  CHECK_FALSE(locks.blocked(8, other));
}

TEST_CASE("release drops every lock of the owner and only those") {
  KeyLocks locks;
  const std::vector<std::string> a{"a", "b"};
  const std::vector<std::string> c{"c"};
  REQUIRE(locks.try_lock(1, a));
  REQUIRE(locks.try_lock(2, c));
  CHECK(locks.release(1));
  CHECK_FALSE(locks.release(1));
  CHECK(locks.holder("a") == KeyLocks::kNone);
  CHECK(locks.holder("c") == 2);
  const std::vector<std::string> bc{"b", "c"};
  CHECK_FALSE(locks.try_lock(3, bc));
  CHECK(locks.release(2));
  CHECK(locks.empty());
  CHECK(locks.try_lock(3, bc));
  // Locking no key holds nothing.
  const std::vector<std::string> none;
  CHECK(locks.try_lock(4, none));
  CHECK_FALSE(locks.holds(4));
}
