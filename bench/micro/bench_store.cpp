// Micro-benchmarks of the Store's hot paths against the obvious alternative, a
// std::unordered_map<std::string, std::string>, on keys shaped like "key:000000123456".
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/keyspace/store.h"

namespace {

using ringkv::engine::Entry;
using ringkv::engine::Expiry;
using ringkv::engine::Store;

std::vector<std::string> make_keys(int64_t n, const char* prefix) {
  std::vector<std::string> keys;
  keys.reserve(static_cast<size_t>(n));
  char buf[32];
  for (int64_t i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof buf, "%s%012lld", prefix, static_cast<long long>(i));
    keys.emplace_back(buf);
  }
  return keys;
}

const std::string kValue = "value:0000123456";

// Inserting n fresh keys, resizes included.
void BM_StoreInsert(benchmark::State& state) {
  const auto keys = make_keys(state.range(0), "key:");
  for (auto _ : state) {
    Store store;
    for (const auto& k : keys) store.set_string(k, kValue, Expiry::none());
    benchmark::DoNotOptimize(store.size());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_StoreInsert)->Arg(100'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

void BM_MapInsert(benchmark::State& state) {
  const auto keys = make_keys(state.range(0), "key:");
  for (auto _ : state) {
    std::unordered_map<std::string, std::string> map;
    for (const auto& k : keys) map[k] = kValue;
    benchmark::DoNotOptimize(map.size());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_MapInsert)->Arg(100'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

// Looking up present keys (hit) or absent ones (miss) in a store of n keys.
void BM_StoreLookup(benchmark::State& state) {
  const auto keys = make_keys(state.range(0), "key:");
  const auto probes = make_keys(state.range(0), state.range(1) ? "key:" : "nop:");
  Store store;
  for (const auto& k : keys) store.set_string(k, kValue, Expiry::none());
  while (store.rehash_step(1000)) {
  }
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(store.lookup(probes[i]));
    if (++i == probes.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_StoreLookup)->Args({1'000'000, 1})->Args({1'000'000, 0});

void BM_MapLookup(benchmark::State& state) {
  const auto keys = make_keys(state.range(0), "key:");
  const auto probes = make_keys(state.range(0), state.range(1) ? "key:" : "nop:");
  std::unordered_map<std::string, std::string> map;
  for (const auto& k : keys) map[k] = kValue;
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(map.find(probes[i]));
    if (++i == probes.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MapLookup)->Args({1'000'000, 1})->Args({1'000'000, 0});

// A full SCAN with COUNT 100 over n keys.
void BM_StoreScan(benchmark::State& state) {
  const auto keys = make_keys(state.range(0), "key:");
  Store store;
  for (const auto& k : keys) store.set_string(k, kValue, Expiry::none());
  for (auto _ : state) {
    size_t seen = 0;
    uint64_t cursor = 0;
    do {
      cursor = store.scan(cursor, 100, [&](const Entry&) { ++seen; });
    } while (cursor != 0);
    benchmark::DoNotOptimize(seen);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_StoreScan)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

}  // namespace
