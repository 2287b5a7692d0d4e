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
#include "engine/types/zset_type.h"

namespace ringkv::test {

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
