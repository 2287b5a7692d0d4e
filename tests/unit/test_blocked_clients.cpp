// Unit tests for the registry of clients waiting in blocking commands.
#include <doctest/doctest.h>

#include "server/blocked_clients.h"

using ringkv::server::BlockedClients;

TEST_CASE("waiters are served per key in the order they blocked") {
  BlockedClients b;
  b.add(7, {{"BLPOP", "a", "b", "0"}, {"a", "b"}, 0});
  b.add(3, {{"BLPOP", "b", "0"}, {"b"}, 500});
  b.add(9, {{"BLPOP", "a", "a", "1"}, {"a", "a"}, 300});
  CHECK(b.size() == 3);
  CHECK(b.waited_on(0, "a"));
  CHECK_FALSE(b.waited_on(0, "c"));
  CHECK(b.waiters(0, "a") == std::vector<uint64_t>{7, 9});
  CHECK(b.waiters(0, "b") == std::vector<uint64_t>{7, 3});
  b.remove(7);
  CHECK(b.waiters(0, "a") == std::vector<uint64_t>{9});
  CHECK(b.waiters(0, "b") == std::vector<uint64_t>{3});
  CHECK(b.find(7) == nullptr);
  REQUIRE(b.find(3) != nullptr);
  CHECK(b.find(3)->argv[0] == "BLPOP");
}

TEST_CASE("deadlines expire earliest first; forever never expires") {
  BlockedClients b;
  b.add(1, {{"BLPOP", "k", "0"}, {"k"}, 0});
  b.add(2, {{"BLPOP", "k", "1"}, {"k"}, 900});
  b.add(3, {{"BLPOP", "k", "1"}, {"k"}, 400});
  CHECK(b.next_deadline() == 400);
  CHECK(b.expired(399).empty());
  CHECK(b.expired(900) == std::vector<uint64_t>{3, 2});
  b.remove(3);
  CHECK(b.next_deadline() == 900);
  b.remove(2);
  CHECK(b.next_deadline() == 0);
  CHECK(b.expired(1u << 30).empty());
  b.remove(1);
  CHECK_FALSE(b.waited_on(0, "k"));
  b.remove(1);  // forgetting twice is harmless
  CHECK(b.size() == 0);
}

TEST_CASE("a key of one database is not the same key of another") {
  BlockedClients b;
  BlockedClients::Waiter in_db3{{"BLPOP", "k", "0"}, {"k"}, 0};
  in_db3.db = 3;
  b.add(1, in_db3);
  b.add(2, {{"BLPOP", "k", "0"}, {"k"}, 0});
  CHECK(b.waiters(0, "k") == std::vector<uint64_t>{2});
  CHECK(b.waiters(3, "k") == std::vector<uint64_t>{1});
  CHECK_FALSE(b.waited_on(5, "k"));
  CHECK(b.waited_keys(3) == std::vector<std::string>{"k"});
  b.remove(1);
  CHECK_FALSE(b.waited_on(3, "k"));
  CHECK(b.waited_on(0, "k"));
}
