// Helpers of the persistence tests: a whole store as comparable text (each key's type, value and
// absolute TTL; sets and hashes sorted, scores as their exact bits) and a scratch directory.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "engine/keyspace/store.h"
#include "engine/types/hash_type.h"
#include "engine/types/list_type.h"
#include "engine/types/object.h"
#include "engine/types/set_type.h"
#include "engine/types/stream_type.h"
#include "engine/types/zset_type.h"

namespace ringkv::test {

// A stream as text items: its counters, each entry, and each group with its pending entries
// (owner, delivery time and count) and consumers (their seen times left out: a replay sees the
// consumers later).
inline void dump_stream(const engine::StreamObject& s, std::vector<std::string>& items) {
  using engine::format_stream_id;
  items.push_back("len=" + std::to_string(s.length()) + " last=" + format_stream_id(s.last_id()) +
                  " first=" + format_stream_id(s.first_id()) +
                  " maxdel=" + format_stream_id(s.max_deleted_id()) +
                  " added=" + std::to_string(s.entries_added()));
  s.for_each(engine::kMinStreamID, engine::kMaxStreamID, false,
             [&](const engine::StreamItem& item) {
               std::string line = format_stream_id(item.id);
               item.for_each_string([&](std::string_view f) { line += " " + std::string(f); });
               items.push_back(line);
               return true;
             });
  for (const auto& [name, g] : s.groups()) {
    std::string line = "group " + name + " " + format_stream_id(g->last_id) +
                       " read=" + std::to_string(g->entries_read) + " consumers";
    for (const auto& [cname, c] : g->consumers()) line += " " + cname;
    items.push_back(line);
    for (const auto& [id, nack] : g->pel()) {
      items.push_back("pending " + format_stream_id(id) + " " + nack.consumer->name + " " +
                      std::to_string(nack.delivery_time) + " " +
                      std::to_string(nack.delivery_count));
    }
  }
}

// One key as text: "<type> ttl=<ms> <elements...>", elements separated by '|'.
inline std::string dump_entry(const engine::Entry& e) {
  using engine::ValueType;
  std::vector<std::string> items;
  switch (e.type()) {
    case ValueType::kString:
      items.emplace_back(e.string_value());
      break;
    case ValueType::kList:
      static_cast<const engine::ListObject*>(e.object())->walk(0, false, [&](std::string_view v) {
        items.emplace_back(v);
        return true;
      });
      break;
    case ValueType::kSet:
      static_cast<const engine::SetObject*>(e.object())->for_each([&](std::string_view m) {
        items.emplace_back(m);
      });
      std::sort(items.begin(), items.end());
      break;
    case ValueType::kZSet:
      static_cast<const engine::ZSetObject*>(e.object())
          ->for_each([&](std::string_view m, double score) {
            items.push_back(std::string(m) + "=" + std::to_string(std::bit_cast<uint64_t>(score)));
          });
      break;
    case ValueType::kHash:
      static_cast<const engine::HashObject*>(e.object())
          ->for_each([&](std::string_view f, std::string_view v) {
            items.push_back(std::string(f) + "=" + std::string(v));
          });
      std::sort(items.begin(), items.end());
      break;
    case ValueType::kStream:
      dump_stream(*static_cast<const engine::StreamObject*>(e.object()), items);
      break;
  }
  std::string text(engine::type_name(e.type()));
  text += " ttl=" + std::to_string(e.expire_at());
  for (const std::string& item : items) text += "|" + item;
  return text;
}

// Every key of the store (expired ones included while it is loading) by name.
inline std::map<std::string, std::string> dump_store(engine::Store& store) {
  std::map<std::string, std::string> keys;
  store.for_each([&](const engine::Entry& e) { keys.emplace(e.key(), dump_entry(e)); });
  return keys;
}

// A fresh directory under the system's temporary directory, removed with its files at the end.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "ringkv-test-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  std::string file(std::string_view name) const { return path_ + "/" + std::string(name); }

  // Writes `bytes` to the file `name` and returns its path.
  std::string write(std::string_view name, std::string_view bytes) const {
    const std::string path = file(name);
    std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
    return path;
  }

 private:
  std::string path_;
};

}  // namespace ringkv::test
