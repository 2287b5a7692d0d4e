// A store holding every type in each of its encodings, small and big, some keys with a TTL: the
// fixture the persistence tests (append-only rewrite, RDB files) write and load back.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>

#include "engine/keyspace/store.h"
#include "engine/types/hash_type.h"
#include "engine/types/list_type.h"
#include "engine/types/object.h"
#include "engine/types/set_type.h"
#include "engine/types/zset_type.h"

namespace ringkv::test {

inline int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

template <typename T>
T& create(engine::Store& store, std::string_view key) {
  return *static_cast<T*>(store.add_object(key, std::make_unique<T>())->object());
}

// Every type in each of its encodings, small and big, some keys with a TTL an hour away.
inline void fill(engine::Store& store) {
  using namespace ringkv::engine;
  const int64_t later = unix_ms() + 3'600'000;
  store.set_string("str:int", "12345", Expiry::none());
  store.set_string("str:embstr", "hello", Expiry::at(later));
  store.set_string("str:raw", std::string(100, 'r'), Expiry::none());
  store.set_string("str:empty", "", Expiry::none());
  store.set_string(std::string("str:bin\r\n\0", 10), std::string("\0\r\n$*", 5), Expiry::none());

  create<ListObject>(store, "list:small").push(ListObject::End::kTail, "a");
  auto& big_list = create<ListObject>(store, "list:big");
  for (int i = 0; i < 3000; ++i) big_list.push(ListObject::End::kTail, "elem" + std::to_string(i));
  store.set_expire("list:big", later);

  auto& intset = create<SetObject>(store, "set:intset");
  for (int i = -5; i < 100; ++i) intset.add(std::to_string(i * 1000));
  auto& small_ht = create<SetObject>(store, "set:ht:small");
  small_ht.add("x");
  small_ht.add("1");
  auto& big_ht = create<SetObject>(store, "set:ht:big");
  for (int i = 0; i < 1000; ++i) big_ht.add("m" + std::to_string(i));
  store.set_expire("set:ht:big", later);

  auto& lp = create<ZSetObject>(store, "zset:listpack");
  lp.set("inf", std::numeric_limits<double>::infinity());
  lp.set("-inf", -std::numeric_limits<double>::infinity());
  lp.set("third", 1.0 / 3.0);
  lp.set("tiny", 4.9e-324);
  lp.set("huge", 1.7976931348623157e308);
  lp.set("neg", -2.5);
  auto& sl = create<ZSetObject>(store, "zset:skiplist");
  for (int i = 0; i < 500; ++i) sl.set("member" + std::to_string(i), std::sqrt(i) - 7.0);
  store.set_expire("zset:skiplist", later);

  create<HashObject>(store, "hash:listpack").set("field", "value");
  auto& big_hash = create<HashObject>(store, "hash:hashtable");
  for (int i = 0; i < 700; ++i) big_hash.set("f" + std::to_string(i), "v" + std::to_string(i));
  auto& long_value = create<HashObject>(store, "hash:long");
  long_value.set("f", std::string(200, 'v'));
  store.set_expire("hash:long", later);
}

}  // namespace ringkv::test
