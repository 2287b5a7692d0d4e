// Micro-benchmarks of the ring lookups every keyed request pays: a key's owner (routing) and its
// preference list (a replicated write's replicas), on the default scheme (five probes).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>
#include <vector>

#include "hashring/hash_ring.h"

namespace {

using ringkv::hashring::HashRing;
using ringkv::hashring::Member;

HashRing make_ring(int64_t nodes) {
  std::vector<Member> members;
  for (int64_t i = 0; i < nodes; ++i) {
    members.push_back(Member{"127.0.0.1:" + std::to_string(7001 + i), 1});
  }
  HashRing ring;
  ring.set_members(members);
  return ring;
}

std::vector<std::string> make_keys(size_t n) {
  std::vector<std::string> keys;
  char buf[32];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof buf, "key:%012zu", i * 7919 % 100000);
    keys.emplace_back(buf);
  }
  return keys;
}

// The owner of a key, on a ring of range(0) nodes.
void BM_Owner(benchmark::State& state) {
  const HashRing ring = make_ring(state.range(0));
  const auto keys = make_keys(4096);
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(ring.point_index_of(keys[i++ & 4095]));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Owner)->Arg(3)->Arg(10);

// The first range(1) entries of a key's preference list, on a ring of range(0) nodes.
void BM_Preference(benchmark::State& state) {
  const HashRing ring = make_ring(state.range(0));
  const auto keys = make_keys(4096);
  std::vector<size_t> out;
  size_t i = 0;
  for (auto _ : state) {
    ring.preference(keys[i++ & 4095], static_cast<size_t>(state.range(1)), out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Preference)->Args({3, 2})->Args({10, 2})->Args({10, 3});

}  // namespace
