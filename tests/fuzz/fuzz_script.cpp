// libFuzzer target for scripts: the input is lines, each run on one fresh Store. A line's first
// byte picks one of the scripts below (or none: the line is then a plain command, to make data
// for the scripts to read), the rest are its arguments separated by single spaces; the script
// runs through EVAL (or EVAL_RO) with them, so redis.call/redis.pcall get arbitrary commands and
// arguments: Redis's checks inside scripts (unknown, noscript, arity, writes from read-only
// scripts), every reply converted to Lua and back in RESP2 and RESP3, Lua numbers as arguments,
// cjson of any reply, cmsgpack of any reply and of the arguments as MessagePack, struct with the
// first argument as a format. After each line the reply must be exactly one complete, valid RESP
// value and the store's key count must agree with its live keys.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tests/fuzz/fuzz_fakes.h"

namespace {

using namespace ringkv;
using namespace ringkv::fuzz;

constexpr size_t kMaxLines = 32;
constexpr size_t kMaxArgs = 32;

struct Template {
  std::string_view command;  // "" for a plain command
  std::string_view body;
  bool key;  // the first argument is KEYS[1] (numkeys 1)
};

constexpr Template kTemplates[] = {
    {"", "", false},
    {"EVAL", "return redis.pcall(unpack(ARGV))", false},
    {"EVAL", "return redis.call(unpack(ARGV))", false},
    {"EVAL", "redis.setresp(3) return redis.pcall(unpack(ARGV))", false},
    {"EVAL_RO", "return redis.pcall(unpack(ARGV))", false},
    {"EVAL", "return redis.pcall(ARGV[1], KEYS[1], unpack(ARGV, 2))", true},
    {"EVAL",
     "local t = {} for i, a in ipairs(ARGV) do t[i] = tonumber(a) or a end "
     "return redis.pcall(unpack(t))",
     false},
    {"EVAL",
     "local ok, s = pcall(cjson.encode, {redis.pcall(unpack(ARGV))}) return {tostring(ok), s}",
     false},
    {"EVAL",
     "redis.setresp(3) local r = redis.pcall(unpack(ARGV)) "
     "return {type(r), r, redis.sha1hex(ARGV[1] or ''), bit.band(#ARGV, 7)}",
     false},
    {"EVAL",
     "local ok, s = pcall(cmsgpack.pack, redis.pcall(unpack(ARGV))) "
     "if not ok then return s end return {s, cmsgpack.unpack(s)}",
     false},
    {"EVAL",
     "local r = {pcall(cmsgpack.unpack_limit, ARGV[1] or '', tonumber(ARGV[2]) or 2, "
     "tonumber(ARGV[3]) or 0)} return {tostring(r[1]), r[2], cjson.encode({unpack(r, 3)})}",
     false},
    {"EVAL",
     "local ok, s = pcall(struct.pack, ARGV[1] or '', unpack(ARGV, 2)) if not ok then return s end "
     "return {s, pcall(struct.size, ARGV[1]), pcall(struct.unpack, ARGV[1], s .. (ARGV[2] or ''))}",
     false},
    {"EVAL", "return redis.error_reply(ARGV[1] or 'x')", false},
    {"EVAL", "return redis.status_reply(ARGV[1] or 'x')", false},
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  Session session;
  for (size_t lines = 0; !input.empty() && lines < kMaxLines; ++lines) {
    const size_t eol = input.find('\n');
    std::string_view line = input.substr(0, eol);
    input = eol == std::string_view::npos ? std::string_view{} : input.substr(eol + 1);
    if (line.empty()) continue;
    const Template& t = kTemplates[static_cast<uint8_t>(line[0]) % std::size(kTemplates)];
    line.remove_prefix(1);
    std::vector<std::string_view> args;
    while (!line.empty() && args.size() < kMaxArgs) {
      const size_t sp = line.find(' ');
      args.push_back(line.substr(0, sp));
      line = sp == std::string_view::npos ? std::string_view{} : line.substr(sp + 1);
    }
    std::vector<std::string_view> argv;
    if (t.command.empty()) {
      if (args.empty()) continue;
      argv = args;
    } else {
      argv = {t.command, t.body, t.key && !args.empty() ? "1" : "0"};
      argv.insert(argv.end(), args.begin(), args.end());
    }
    session.run(argv);
  }
  return 0;
}
