// Unit tests of the script engine: reply ↔ Lua conversions both ways (RESP2 and RESP3), the
// sandbox (read-only globals that still iterate, removed functions, cjson, bit, cmsgpack and
// struct), shebang flags, the cache, and the errors of redis.call/pcall. Scripts' commands run on
// a Store through the command table.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "engine/command.h"
#include "engine/keyspace/store.h"
#include "engine/scripting/script_engine.h"
#include "tests/unit/command_harness.h"

namespace ringkv::engine {
namespace {

// Runs a script's commands straight through the table's handlers on one Store.
struct Host : ScriptHost, ServerControl {
  Store store;
  ScriptEngine engine{this};
  std::vector<std::string> calls;
  bool busy_called = false;

  Host() { store.set_now(test::kNow); }

  void script_begin(ClientSession*) override {}
  void script_call(const CommandSpec& spec, std::span<const std::string_view> argv,
                   protocol::ReplyWriter& reply) override {
    calls.emplace_back(argv[0]);
    CommandContext ctx{argv, reply, store, nullptr, this, &spec};
    spec.handler(ctx);
  }
  void script_busy(bool) override {
    busy_called = true;
    engine.kill();
  }
  void script_end(bool) override {}

  std::string info(std::span<const std::string_view>) override { return {}; }
  std::string client_list(std::span<const uint64_t>, std::optional<ClientKind>) override {
    return {};
  }
  size_t kill_clients(const ClientKillFilter&) override { return 0; }
  void config_get(std::string_view, std::vector<std::pair<std::string, std::string>>&) override {}
  std::string config_set(std::span<const std::pair<std::string_view, std::string_view>>) override {
    return {};
  }
  void config_resetstat() override {}
  void multi(CommandContext&) override {}
  void exec(CommandContext&) override {}
  void discard(CommandContext&) override {}
  void watch(CommandContext&) override {}
  void unwatch(CommandContext&) override {}
  void shutdown() override {}
  int64_t last_save_unix() const override { return 0; }
  ScriptEngine* script_engine() override { return &engine; }

  // EVAL script numkeys args... (RESP2 unless `resp3`); returns the reply bytes.
  std::string eval(std::string_view script, std::vector<std::string_view> rest = {"0"},
                   bool resp3 = false, bool read_only = false) {
    std::vector<std::string_view> argv{"EVAL", script};
    argv.insert(argv.end(), rest.begin(), rest.end());
    std::string out;
    protocol::ReplyWriter writer(
        out, resp3 ? protocol::RespVersion::kResp3 : protocol::RespVersion::kResp2);
    CommandContext ctx{argv, writer, store, nullptr, this, nullptr};
    engine.eval(ctx, false, read_only);
    return out;
  }
};

std::string error_at(std::string_view script, std::string_view text) {
  return "-" + std::string(text) + " script: " + sha1_hex(script) + ", on @user_script:1.\r\n";
}

}  // namespace

TEST_CASE("Lua values become replies as Redis converts them") {
  Host h;
  CHECK(h.eval("return 1") == ":1\r\n");
  CHECK(h.eval("return 3.99") == ":3\r\n");
  CHECK(h.eval("return -3.99") == ":-3\r\n");
  CHECK(h.eval("return 'a'") == "$1\r\na\r\n");
  CHECK(h.eval("return true") == ":1\r\n");
  CHECK(h.eval("return false") == "$-1\r\n");
  CHECK(h.eval("return nil") == "$-1\r\n");
  CHECK(h.eval("return {1,nil,3}") == "*1\r\n:1\r\n");
  CHECK(h.eval("return {ok='fine'}") == "+fine\r\n");
  CHECK(h.eval("return {err='bad thing'}") == "-bad thing\r\n");
  CHECK(h.eval("return {1,{2,{3}},'x'}") == "*3\r\n:1\r\n*2\r\n:2\r\n*1\r\n:3\r\n$1\r\nx\r\n");
  CHECK(h.eval("return {double=1.5}") == "$3\r\n1.5\r\n");
  CHECK(h.eval("return {map={a=1}}") == "*2\r\n$1\r\na\r\n:1\r\n");
  CHECK(h.eval("return {set={a=true}}") == "*1\r\n$1\r\na\r\n");
}

TEST_CASE("RESP3: redis.setresp(3) and RESP3 callers") {
  Host h;
  CHECK(h.eval("return nil", {"0"}, true) == "_\r\n");
  CHECK(h.eval("return {double=1.5}", {"0"}, true) == ",1.5\r\n");
  CHECK(h.eval("return {map={a=1}}", {"0"}, true) == "%1\r\n$1\r\na\r\n:1\r\n");
  CHECK(h.eval("return {set={a=true}}", {"0"}, true) == "~1\r\n$1\r\na\r\n");
  CHECK(h.eval("return {big_number='12'}", {"0"}, true) == "(12\r\n");
  CHECK(h.eval("redis.setresp(3) return true", {"0"}, true) == "#t\r\n");
  CHECK(h.eval("redis.setresp(3) return false", {"0"}, true) == "#f\r\n");
  CHECK(h.eval("redis.setresp(3) return false") == ":0\r\n");
  h.eval("redis.call('hset','h','a','1')");
  CHECK(h.eval("redis.setresp(3) return redis.call('hgetall','h')['map']['a']") == "$1\r\n1\r\n");
  CHECK(h.eval("redis.setresp(3) return redis.call('hgetall','h')", {"0"}, true) ==
        "%1\r\n$1\r\na\r\n$1\r\n1\r\n");
  CHECK(h.eval("redis.setresp(3) return type(redis.call('get','nokey'))") == "$3\r\nnil\r\n");
  CHECK(h.eval("return type(redis.call('get','nokey'))") == "$7\r\nboolean\r\n");
}

TEST_CASE("replies become Lua values") {
  Host h;
  CHECK(h.eval("return redis.call('set','k','v')") == "+OK\r\n");
  CHECK(h.eval("return redis.call('set','k','v')['ok']") == "$2\r\nOK\r\n");
  CHECK(h.eval("return type(redis.call('incr','n'))") == "$6\r\nnumber\r\n");
  CHECK(h.eval("redis.call('rpush','l','a','b') return redis.call('lrange','l',0,-1)") ==
        "*2\r\n$1\r\na\r\n$1\r\nb\r\n");
  CHECK(h.eval("return redis.pcall('incr','k')['err']") ==
        "$43\r\nERR value is not an integer or out of range\r\n");
  CHECK(h.eval("redis.call('set','f',0.1) return redis.call('get','f')") ==
        "$19\r\n0.10000000000000001\r\n");
}

TEST_CASE("errors of redis.call are raised with the script line, pcall returns them") {
  Host h;
  h.eval("redis.call('set','k','v')");
  const std::string s = "return redis.call('incr','k')";
  CHECK(h.eval(s) == error_at(s, "ERR value is not an integer or out of range"));
  CHECK(h.eval("return redis.pcall('incr','k')") ==
        "-ERR value is not an integer or out of range\r\n");
  const std::string unknown = "return redis.call('nosuch')";
  CHECK(h.eval(unknown) == error_at(unknown, "ERR Unknown Redis command called from script"));
  const std::string arity = "return redis.call('get')";
  CHECK(h.eval(arity) ==
        error_at(arity, "ERR Wrong number of args calling Redis command from script"));
  const std::string noscript = "return redis.call('blpop','l',0)";
  CHECK(h.eval(noscript) ==
        error_at(noscript, "ERR This Redis command is not allowed from script"));
  CHECK(h.eval("return redis.pcall('set','a',{})") ==
        "-ERR Lua redis lib command arguments must be strings or integers\r\n");
  CHECK(h.eval("return redis.pcall()") ==
        "-ERR Please specify at least one argument for this redis lib call\r\n");
  const std::string boom = "error('boom')";
  CHECK(h.eval(boom) == error_at(boom, "ERR user_script:1: boom"));
  CHECK(h.eval("error({err='MY custom'})") == error_at("error({err='MY custom'})", "MY custom"));
  CHECK(h.eval("local ok, e = pcall(function() redis.call('nosuch') end) return e") ==
        "$44\r\nERR Unknown Redis command called from script\r\n");
  CHECK(h.eval("return +") ==
        "-ERR Error compiling script (new function): user_script:1: unexpected symbol near "
        "'+'\r\n");
}

TEST_CASE("the sandbox: read-only globals, no os/io/loadfile, cjson, bit, cmsgpack, struct") {
  Host h;
  CHECK(h.eval("x = 1") ==
        error_at("x = 1", "ERR user_script:1: Attempt to modify a readonly table"));
  CHECK(h.eval("string.foo = 1") ==
        error_at("string.foo = 1", "ERR user_script:1: Attempt to modify a readonly table"));
  CHECK(h.eval("rawset(_G,'x',1)") ==
        error_at("rawset(_G,'x',1)", "ERR Attempt to modify a readonly table"));
  for (std::string name : {"os", "io", "loadfile", "dofile", "print", "foo"}) {
    const std::string s = "return " + name;
    CHECK(h.eval(s) == error_at(s,
                                "ERR user_script:1: Script attempted to access nonexistent "
                                "global variable '" +
                                    name + "'"));
  }
  CHECK(h.eval("local a = 1 return a") == ":1\r\n");
  CHECK(h.eval("return cjson.encode({1,2,{a=1}})") == "$13\r\n[1,2,{\"a\":1}]\r\n");
  CHECK(h.eval("return cjson.decode('[1,2,{\"a\":3}]')[3].a") == ":3\r\n");
  CHECK(h.eval("return bit.band(7,3)") == ":3\r\n");
  CHECK(h.eval("return bit.tohex(255)") == "$8\r\n000000ff\r\n");
  CHECK(h.eval("return cmsgpack.pack({1, 'a'})") ==
        "$4\r\n\x92\x01\xa1"
        "a\r\n");
  CHECK(h.eval("return struct.unpack('>h', struct.pack('>h', -5))") == ":-5\r\n");
  // The read-only library tables still iterate (Lua 5.1 has no __pairs: next() knows them).
  CHECK(h.eval("local n = 0 for k in pairs(struct) do n = n + 1 end return n") == ":3\r\n");
  CHECK(h.eval("local n = 0 for k in pairs(cmsgpack) do n = n + 1 end return n") == ":8\r\n");
  CHECK(h.eval("return next(string) ~= nil and pairs({}) ~= next") == ":1\r\n");
  CHECK(h.eval("return redis.sha1hex('')") ==
        "$40\r\nda39a3ee5e6b4b0d3255bfef95601890afd80709\r\n");
  CHECK(h.eval("return redis.REPL_ALL") == ":3\r\n");
  CHECK(h.eval("return redis.replicate_commands()") == ":1\r\n");
  CHECK(h.eval("return {KEYS[1], ARGV[1], #KEYS, #ARGV}", {"1", "k", "a", "b"}) ==
        "*4\r\n$1\r\nk\r\n$1\r\na\r\n:1\r\n:2\r\n");
}

TEST_CASE("shebang flags, read-only scripts and the cache") {
  Host h;
  uint32_t flags = 0;
  size_t skip = 0;
  std::string error;
  CHECK(parse_shebang("#!lua flags=no-writes,allow-oom\nreturn 1", flags, skip, error));
  CHECK(flags == (kScriptNoWrites | kScriptAllowOom));
  CHECK(skip == 31);
  CHECK_FALSE(parse_shebang("#!lua flags=foo\nreturn 1", flags, skip, error));
  CHECK(error == "ERR Unexpected flag in script shebang: foo");
  CHECK_FALSE(parse_shebang("#!lua", flags, skip, error));
  CHECK(error == "ERR Invalid script shebang");
  const std::string ro = "#!lua flags=no-writes\nreturn redis.call('set','x','1')";
  CHECK(h.eval(ro) == "-ERR Write commands are not allowed from read-only scripts. script: " +
                          sha1_hex(ro) + ", on @user_script:2.\r\n");
  const std::string write = "return redis.call('set','x','1')";
  CHECK(h.eval(write, {"0"}, false, true).find("Write commands are not allowed") !=
        std::string::npos);
  CHECK(h.eval("return 1", {"2", "a"}) ==
        "-ERR Number of keys can't be greater than number of args\r\n");
  CHECK(h.eval("return 1", {"-1"}) == "-ERR Number of keys can't be negative\r\n");
  std::string load_error;
  const std::string sha = h.engine.load("return 2", load_error);
  CHECK(sha == sha1_hex("return 2"));
  CHECK(h.engine.exists(sha));
  h.engine.flush();
  CHECK_FALSE(h.engine.exists(sha));
  CHECK(h.engine.kill() == ScriptEngine::KillResult::kNotBusy);
}

TEST_CASE("a busy script calls the host from its hook and can be killed") {
  Host h;
  h.engine.set_busy_threshold_ms(1);
  const std::string s = "while true do end";
  CHECK(h.eval(s) == error_at(s, "ERR Script killed by user with SCRIPT KILL..."));
  CHECK(h.busy_called);
  CHECK_FALSE(h.engine.running());
  CHECK(h.eval("return 1") == ":1\r\n");
}

TEST_CASE("function libraries: metadata line, names and the DUMP payload") {
  LibraryMetadata md;
  std::string error;
  CHECK(parse_library_metadata("#!lua name=lib\nreturn 1", md, error));
  CHECK(md.engine == "lua");
  CHECK(md.name == "lib");
  CHECK(md.body == 14);
  CHECK(parse_library_metadata("#!LUA NAME=\"a b\"\n", md, error));
  CHECK(md.name == "a b");
  CHECK_FALSE(parse_library_metadata("return 1", md, error));
  CHECK(error == "Missing library metadata");
  CHECK_FALSE(parse_library_metadata("#!lua name=x", md, error));
  CHECK(error == "Invalid library metadata");
  CHECK_FALSE(parse_library_metadata("#!lua\n", md, error));
  CHECK(error == "Library name was not given");
  CHECK_FALSE(parse_library_metadata("#!lua name=a name=b\n", md, error));
  CHECK(error == "Invalid metadata value, name argument was given multiple times");
  CHECK_FALSE(parse_library_metadata("#!lua name=a x=1\n", md, error));
  CHECK(error == "Invalid metadata value given: x=1");
  CHECK(valid_function_name("a_1"));
  CHECK_FALSE(valid_function_name(""));
  CHECK_FALSE(valid_function_name("a-b"));

  Host h;
  const std::string code = "#!lua name=lib\nredis.register_function('f', function() end)";
  CHECK(h.engine.function_load(code, false, true, error) == "lib");
  const std::string payload = function_dump_payload(h.engine.functions());
  CHECK(static_cast<uint8_t>(payload[0]) == kRdbOpcodeFunction2);
  std::vector<std::string> codes;
  CHECK(parse_function_payload(payload, codes, error));
  CHECK(codes == std::vector<std::string>{code});
  std::string bad = payload;
  bad[3] ^= 1;
  CHECK_FALSE(parse_function_payload(bad, codes, error));
  CHECK(error == "DUMP payload version or checksum are wrong");
}

TEST_CASE("functions: load, call, replace, delete and restore") {
  Host h;
  std::string error;
  const auto fcall = [&h](std::vector<std::string_view> argv, bool read_only = false) {
    std::string out;
    protocol::ReplyWriter writer(out, protocol::RespVersion::kResp2);
    CommandContext ctx{argv, writer, h.store, nullptr, &h, nullptr};
    h.engine.fcall(ctx, read_only);
    return out;
  };
  const std::string lib =
      "#!lua name=lib\n"
      "redis.register_function('put', function(k, a) return redis.call('set', k[1], a[1]) end)\n"
      "redis.register_function{function_name='peek', callback=function(k) "
      "return redis.call('get', k[1]) end, flags={'no-writes'}}";
  CHECK(h.engine.function_load(lib, false, true, error) == "lib");
  CHECK(h.engine.function_load(lib, false, true, error).empty());
  CHECK(error == "Library 'lib' already exists");
  CHECK(fcall({"FCALL", "put", "1", "k", "v"}) == "+OK\r\n");
  CHECK(fcall({"FCALL", "PEEK", "1", "k"}) == "$1\r\nv\r\n");
  CHECK(fcall({"FCALL_RO", "put", "1", "k", "v"}, true) ==
        "-ERR Can not execute a script with write flag using *_ro command.\r\n");
  CHECK(fcall({"FCALL", "nope", "0"}) == "-ERR Function not found\r\n");
  CHECK(fcall({"FCALL", "put", "x"}) == "-ERR Bad number of keys provided\r\n");
  // A library whose code fails leaves the one it would replace in place.
  // (While it loads, its globals are the library API's: `redis` only, read-only.)
  CHECK(h.engine.function_load("#!lua name=lib\nx = 1", true, true, error).empty());
  CHECK(error ==
        "Error registering functions: ERR user_function:2: Attempt to modify a readonly table");
  CHECK(fcall({"FCALL", "peek", "1", "k"}) == "$1\r\nv\r\n");
  CHECK(h.engine
            .function_load("#!lua name=other\nredis.register_function('put', function() end)",
                           false, true, error)
            .empty());
  CHECK(error == "Function put already exists");

  const std::string payload = function_dump_payload(h.engine.functions());
  CHECK(h.engine.function_delete("lib"));
  CHECK_FALSE(h.engine.function_delete("lib"));
  CHECK(h.engine.functions().empty());
  CHECK(h.engine.function_restore(payload, ScriptEngine::RestorePolicy::kAppend, error));
  CHECK_FALSE(h.engine.function_restore(payload, ScriptEngine::RestorePolicy::kAppend, error));
  CHECK(error == "Library lib already exists");
  CHECK(h.engine.function_restore(payload, ScriptEngine::RestorePolicy::kReplace, error));
  CHECK(h.engine.functions().function_count() == 2);
  h.engine.function_flush();
  CHECK(fcall({"FCALL", "peek", "1", "k"}) == "-ERR Function not found\r\n");
}

}  // namespace ringkv::engine
