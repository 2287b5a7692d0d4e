// Micro-benchmarks of the reply writer on the shapes the list and hash reads answer with: an
// array of short bulk strings (LRANGE_100's 100 three-byte elements) and of longer ones.
#include <benchmark/benchmark.h>

#include <string>

#include "protocol/reply_writer.h"

namespace {

using ringkv::protocol::ReplyWriter;

// An array of 100 bulk strings of range(0) bytes each, into a reused output buffer.
void BM_BulkArray(benchmark::State& state) {
  const std::string element(static_cast<size_t>(state.range(0)), 'x');
  std::string out;
  ReplyWriter w(out);
  for (auto _ : state) {
    out.clear();
    w.array(100);
    for (int i = 0; i < 100; ++i) w.bulk(element);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * 100);
}
BENCHMARK(BM_BulkArray)->Arg(3)->Arg(32)->Arg(512);

}  // namespace
