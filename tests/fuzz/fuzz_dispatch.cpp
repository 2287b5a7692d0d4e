// libFuzzer target for command dispatch: the input is a script of commands, one per line,
// arguments separated by single spaces (any other byte, NUL and CR included, is argument text).
// Each command runs through engine::dispatch against one fresh Store, with a minimal client,
// server and pub/sub registry so every row of the command table can run (EVAL's scripts calling
// commands on the same store), blocking commands answering as inside MULTI. After each command the
// reply must be complete, valid RESP (exactly one value, or one per channel for the (un)subscribe
// family), the store's key count must agree with its live keys, and after FLUSHALL/FLUSHDB
// used_memory must be back to an empty store's.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tests/fuzz/fuzz_fakes.h"

namespace {

using namespace ringkv;
using namespace ringkv::fuzz;

// Bounds that keep one input fast; longer scripts add little that shorter ones cannot reach.
constexpr size_t kMaxCommands = 64;
constexpr size_t kMaxArgs = 64;
// Splits the input into commands (lines) of arguments (space-separated, empty ones kept: an
// empty argument is a valid request argument).
std::vector<std::vector<std::string_view>> split_script(std::string_view script) {
  std::vector<std::vector<std::string_view>> commands;
  while (!script.empty() && commands.size() < kMaxCommands) {
    const size_t eol = script.find('\n');
    std::string_view line = script.substr(0, eol);
    script = eol == std::string_view::npos ? std::string_view{} : script.substr(eol + 1);
    std::vector<std::string_view> argv;
    while (argv.size() < kMaxArgs) {
      const size_t sp = line.find(' ');
      argv.push_back(line.substr(0, sp));
      if (sp == std::string_view::npos) break;
      line.remove_prefix(sp + 1);
    }
    commands.push_back(std::move(argv));
  }
  return commands;
}

bool is_flush(std::string_view reply, const engine::CommandSpec* spec) {
  return spec != nullptr && (spec->name == "flushall" || spec->name == "flushdb") &&
         reply == "+OK\r\n";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view script(reinterpret_cast<const char*>(data), size);
  Session session;
  const size_t empty_memory = session.store.used_memory();
  for (const std::vector<std::string_view>& argv : split_script(script)) {
    const engine::CommandSpec* spec = session.run(argv);
    if (is_flush(session.out, spec)) {
      require(session.store.size() == 0, "keys left by a flush", argv, session.out);
      require(session.store.used_memory() == empty_memory, "used_memory not back to empty", argv,
              session.out);
    }
  }
  return 0;
}
