// aof_load: writes an append-only file of N small SETs ("SET key:000000123456 <16 bytes>", as
// redis-benchmark's keys) plus a share of RPUSH/HSET/PEXPIREAT records, then loads it into an
// empty store with persistence::load_aof and reports records per second and MB/s.
//
//   aof_load [records=3000000] [file=/tmp/ringkv-aof-load.aof] [keep]
//
// With "keep" the file stays, e.g. for timing redis-server loading the same records.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "engine/keyspace/store.h"
#include "persistence/aof_loader.h"
#include "protocol/request_writer.h"

namespace {

// Every tenth record is a collection write or a TTL, the rest SETs of distinct keys.
void write_file(const std::string& path, size_t records) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  std::string out;
  char key[32];
  const std::string value(16, 'v');
  for (size_t i = 0; i < records; ++i) {
    std::snprintf(key, sizeof(key), "key:%012zu", i);
    std::vector<std::string_view> argv;
    switch (i % 10) {
      case 7:
        argv = {"RPUSH", "list:small", value};
        break;
      case 8:
        argv = {"HSET", "hash:small", key, value};
        break;
      case 9:
        argv = {"PEXPIREAT", "key:000000000000", "99999999999999"};
        break;
      default:
        argv = {"SET", key, value};
    }
    ringkv::protocol::append_request(out, argv);
    if (out.size() > (4u << 20)) {
      file.write(out.data(), std::streamsize(out.size()));
      out.clear();
    }
  }
  file.write(out.data(), std::streamsize(out.size()));
}

}  // namespace

int main(int argc, char** argv) {
  const size_t records = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 3'000'000;
  const std::string path = argc > 2 ? argv[2] : "/tmp/ringkv-aof-load.aof";
  write_file(path, records);
  ringkv::engine::Store store;
  const std::clock_t cpu_start = std::clock();
  auto result = ringkv::persistence::load_aof(path, store, [](const auto& p) {
    std::printf("  loading: %.0f%% %llu commands %llu keys\n",
                100.0 * double(p.bytes_read) / double(p.file_bytes),
                static_cast<unsigned long long>(p.commands),
                static_cast<unsigned long long>(p.keys));
  });
  const double cpu_seconds = double(std::clock() - cpu_start) / CLOCKS_PER_SEC;
  if (!(argc > 3 && std::string_view(argv[3]) == "keep")) std::remove(path.c_str());
  if (result.status != ringkv::persistence::LoadResult::Status::kOk) {
    std::printf("load failed: %s\n", result.error.c_str());
    return 1;
  }
  // CPU time too: on a shared machine the wall clock also counts other processes' turns.
  std::printf(
      "%llu records, %.1f MB in %.3f s (%.3f s CPU): %.2f M records/s (%.2f M per CPU second), "
      "%.0f MB/s, %zu keys\n",
      static_cast<unsigned long long>(result.commands), double(result.file_bytes) / 1e6,
      result.seconds, cpu_seconds, double(result.commands) / result.seconds / 1e6,
      double(result.commands) / cpu_seconds / 1e6, double(result.file_bytes) / 1e6 / result.seconds,
      store.size());
  return 0;
}
