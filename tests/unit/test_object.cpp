// Unit tests of the collection object model: the store owns objects (frees them on delete,
// overwrite, expiry, FLUSHALL sync and async and in its destructor), moves them on RENAME and
// TTL changes, deep-copies them on COPY, counts their memory, and the ObjectWrite guard deletes
// keys whose object became empty.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "engine/keyspace/store.h"
#include "engine/types/object.h"
#include "protocol/errors.h"

namespace {

using namespace ringkv::engine;

constexpr int64_t kNow = 1'700'000'000'000;

std::atomic<int> live_objects{0};

// A minimal collection: a list of strings, counting live instances.
class TestList final : public Object {
 public:
  static constexpr ValueType kType = ValueType::kList;
  TestList() : Object(kType) { ++live_objects; }
  ~TestList() override { --live_objects; }
  std::string_view encoding_name() const override { return "testlist"; }
  size_t size() const override { return items.size(); }
  size_t memory() const override {
    size_t bytes = sizeof(*this) + items.capacity() * sizeof(std::string);
    for (const std::string& s : items) bytes += s.capacity();
    return bytes;
  }
  std::unique_ptr<Object> clone() const override {
    auto copy = std::make_unique<TestList>();
    copy->items = items;
    return copy;
  }
  std::vector<std::string> items;
};

void push(Store& store, std::string_view key, std::string value) {
  auto list = write_object<TestList>(store, key, true);
  REQUIRE(list.ok());
  list.value()->items.push_back(std::move(value));
}

const TestList* read(Store& store, std::string_view key) {
  auto list = read_object<TestList>(store, key);
  REQUIRE(list.ok());
  return *list;
}

}  // namespace

TEST_CASE("write_object creates, read_object reads, other types are WRONGTYPE") {
  live_objects = 0;
  {
    Store store;
    store.set_now(kNow);
    CHECK(read(store, "l") == nullptr);
    push(store, "l", "a");
    push(store, "l", "b");
    const TestList* list = read(store, "l");
    REQUIRE(list != nullptr);
    CHECK(list->items == std::vector<std::string>{"a", "b"});
    CHECK(store.peek("l")->type() == ValueType::kList);
    CHECK(value_encoding_name(*store.peek("l")) == "testlist");

    store.set_string("s", "v", Expiry::none());
    CHECK(read_object<TestList>(store, "s").error() == ringkv::protocol::err::kWrongType);
    CHECK(write_object<TestList>(store, "s", true).error() == ringkv::protocol::err::kWrongType);
    CHECK(value_encoding_name(*store.peek("s")) == "embstr");
    CHECK(live_objects == 1);
  }
  CHECK(live_objects == 0);  // the store's destructor freed it
}

TEST_CASE("a write that leaves the object empty deletes the key") {
  live_objects = 0;
  Store store;
  store.set_now(kNow);
  {
    // Created but never filled (a command that failed after creating): no key remains.
    auto list = write_object<TestList>(store, "l", true);
    REQUIRE(list.ok());
    CHECK(store.contains("l"));
  }
  CHECK_FALSE(store.contains("l"));
  CHECK(live_objects == 0);
  {
    auto absent = write_object<TestList>(store, "l", false);
    REQUIRE(absent.ok());
    CHECK_FALSE(absent.value());
  }
  CHECK(store.size() == 0);

  push(store, "l", "a");
  {
    auto list = write_object<TestList>(store, "l", false);
    list.value()->items.clear();
  }
  CHECK_FALSE(store.contains("l"));
  CHECK(live_objects == 0);
  CHECK(store.used_memory() == Store().used_memory());
}

TEST_CASE("delete, overwrite, expiry and FLUSHALL free objects") {
  live_objects = 0;
  Store store;
  store.set_now(kNow);
  push(store, "a", "1");
  push(store, "b", "1");
  push(store, "c", "1");
  CHECK(live_objects == 3);
  CHECK(store.erase("a"));
  CHECK(live_objects == 2);
  store.set_string("b", "now a string", Expiry::none());
  CHECK(live_objects == 1);
  CHECK(store.peek("b")->string_value() == "now a string");
  CHECK(store.set_expire("c", kNow + 10));
  store.set_now(kNow + 11);
  CHECK(store.peek("c") == nullptr);
  CHECK(live_objects == 0);

  for (int i = 0; i < 10; ++i) push(store, "k" + std::to_string(i), "x");
  store.clear(false);
  CHECK(live_objects == 0);

  // Async: big enough to go to the background thread; the objects are freed there.
  for (int i = 0; i < 1000; ++i) push(store, "k" + std::to_string(i), "x");
  CHECK(live_objects == 1000);
  store.clear(true);
  CHECK(store.size() == 0);
  for (int i = 0; i < 500 && live_objects != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  CHECK(live_objects == 0);
}

TEST_CASE("RENAME and TTL changes move the object; COPY deep-copies it") {
  live_objects = 0;
  Store store;
  store.set_now(kNow);
  push(store, "src", "a");
  const Object* original = store.peek("src")->object();
  CHECK(store.set_expire("src", kNow + 5000));
  CHECK(store.peek("src")->object() == original);  // same object, new block
  CHECK(store.rename("src", "dst"));
  CHECK_FALSE(store.contains("src"));
  CHECK(store.peek("dst")->object() == original);
  CHECK(store.peek("dst")->expire_at() == kNow + 5000);
  CHECK(live_objects == 1);
  CHECK(store.persist("dst"));
  CHECK(store.peek("dst")->object() == original);

  CHECK(store.copy("dst", "copy", false));
  CHECK(live_objects == 2);
  push(store, "copy", "b");
  CHECK(read(store, "dst")->items.size() == 1);
  CHECK(read(store, "copy")->items.size() == 2);

  // RENAME onto an existing collection frees the one it replaces.
  CHECK(store.rename("copy", "dst"));
  CHECK(live_objects == 1);
  CHECK(read(store, "dst")->items.size() == 2);
  // COPY with REPLACE over a string, then over a collection.
  store.set_string("s", "v", Expiry::none());
  CHECK_FALSE(store.copy("dst", "s", false));
  CHECK(store.copy("dst", "s", true));
  CHECK(store.peek("s")->type() == ValueType::kList);
  CHECK(live_objects == 2);
}

TEST_CASE("used_memory counts objects exactly through every path") {
  live_objects = 0;
  Store store;
  store.set_now(kNow);
  const size_t empty = store.used_memory();
  push(store, "l", std::string(1000, 'x'));
  const size_t one = store.used_memory();
  CHECK(one >= empty + 1000);
  push(store, "l", std::string(1000, 'y'));
  CHECK(store.used_memory() >= one + 1000);
  CHECK(store.rename("l", "m"));
  CHECK(store.set_expire("m", kNow + 1000));
  CHECK(store.copy("m", "n", false));
  const size_t two = store.used_memory();
  CHECK(store.erase("n"));
  CHECK(store.erase("m"));
  CHECK(store.used_memory() == empty);
  CHECK(two > one);
}

TEST_CASE("MOVE, COPY ... DB and SWAPDB between stores keep values, TTLs and accounting") {
  live_objects = 0;
  {
    Store a, b;
    a.set_now(kNow);
    b.set_now(kNow);
    const size_t empty = b.used_memory();
    push(a, "l", "x");
    push(a, "l", "y");
    a.set_string("s", "text", Expiry::at(kNow + 5000));
    const size_t full = a.used_memory();

    CHECK(a.move_to(b, "l"));
    CHECK(a.peek("l") == nullptr);
    REQUIRE(read(b, "l") != nullptr);
    CHECK(read(b, "l")->items == std::vector<std::string>{"x", "y"});
    CHECK(live_objects == 1);  // moved, not copied
    CHECK(a.move_to(b, "s"));
    CHECK(b.peek("s")->expire_at() == kNow + 5000);
    CHECK(b.volatile_size() == 1);
    CHECK(a.size() == 0);
    CHECK(b.used_memory() - empty == full - a.used_memory());

    // Nothing moves onto an existing key, nor from a missing one.
    a.set_string("s", "other", Expiry::none());
    CHECK_FALSE(a.move_to(b, "s"));
    CHECK(a.peek("s")->string_value() == "other");
    CHECK_FALSE(a.move_to(b, "missing"));

    CHECK(b.copy_to(a, "l", "l2", false));
    CHECK(live_objects == 2);  // a deep copy
    CHECK(read(a, "l2")->items == read(b, "l")->items);
    CHECK_FALSE(b.copy_to(a, "s", "s", false));  // exists there, no REPLACE
    CHECK(b.copy_to(a, "s", "s", true));
    CHECK(a.peek("s")->string_value() == "text");
    CHECK(a.peek("s")->expire_at() == kNow + 5000);

    const size_t a_keys = a.size(), b_keys = b.size();
    const size_t a_bytes = a.used_memory(), b_bytes = b.used_memory();
    a.swap_contents(b);
    CHECK(a.size() == b_keys);
    CHECK(b.size() == a_keys);
    CHECK(a.used_memory() == b_bytes);
    CHECK(b.used_memory() == a_bytes);
    CHECK(read(b, "l2") != nullptr);
    // Each store still works on its own table after the swap (writes, deletes, expiry).
    push(b, "l2", "z");
    CHECK(read(b, "l2")->items.size() == 3);
    CHECK(a.erase("l"));
    b.set_now(kNow + 6000);
    CHECK(b.peek("s") == nullptr);
  }
  CHECK(live_objects == 0);
}
