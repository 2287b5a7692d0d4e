// Command table invariants, lookup, Redis's exact resolve errors, key positions, and the COMMAND
// subcommands' reply bytes checked against redis-server 7.0.15.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "engine/command.h"
#include "engine/command_docs.h"
#include "engine/commands/introspection.h"
#include "engine/commands/server.h"
#include "engine/commands/string.h"
#include "engine/commands/string_ops.h"
#include "engine/keyspace/store.h"

using namespace ringkv::engine;
using ringkv::protocol::ReplyWriter;
using ringkv::protocol::RespVersion;

namespace {

std::string resolve_error(std::vector<std::string_view> argv) {
  std::string error;
  const CommandSpec* spec = resolve_command(argv, error);
  CHECK(spec == nullptr);
  return error;
}

// Runs argv through dispatch and returns the reply bytes.
std::string run(std::vector<std::string_view> argv, RespVersion v = RespVersion::kResp2) {
  std::string out;
  ReplyWriter reply(out, v);
  Store store;
  CommandContext ctx{argv, reply, store, nullptr, nullptr, nullptr};
  dispatch(ctx);
  return out;
}

void check_rows(std::span<const CommandSpec> rows, bool sub) {
  std::set<std::string_view> names;
  for (const CommandSpec& spec : rows) {
    CAPTURE(spec.name);
    CHECK(names.insert(spec.name).second);
    for (char c : spec.name) CHECK_FALSE((c >= 'A' && c <= 'Z'));
    CHECK(spec.arity != 0);
    CHECK_FALSE(spec.group.empty());
    CHECK_FALSE(spec.since.empty());
    CHECK_FALSE(spec.summary.empty());
    // Every row documents its complexity, except MONITOR's and LOLWUT's, which Redis leaves
    // undocumented, and the internal replication commands', which have none, as in Redis.
    CHECK((!spec.complexity.empty() || spec.name == "monitor" || spec.name == "lolwut" ||
           spec.summary == "Internal command used for replication"));
    CHECK_FALSE(spec.acl_categories.empty());
    std::vector<DocArg> args;
    CHECK(parse_syntax(spec.syntax, args));
    // Keys (fixed or movable) come with key specs and fixed ones with a positive step; keyless
    // rows have neither.
    CHECK((spec.first_key() > 0 || spec.find_keys != nullptr) == !spec.key_specs.empty());
    if (spec.first_key() > 0) CHECK(spec.key_step() > 0);
    if (spec.subcommands.empty()) {
      CHECK((spec.handler != nullptr));
    } else {
      CHECK_FALSE(sub);
      check_rows(spec.subcommands, true);
    }
  }
}

}  // namespace

TEST_CASE("every row is valid and names are unique and lowercase") {
  check_rows(command_table(), false);
  CHECK(command_table().size() > 60);
}

TEST_CASE("routing flags mark keyspace-wide and splittable commands") {
  for (std::string_view n :
       {"dbsize", "keys", "scan", "randomkey", "flushall", "flushdb", "swapdb"}) {
    CAPTURE(n);
    CHECK((find_command(n)->flags & kKeyspaceWide) != 0);
  }
  for (std::string_view n : {"mget", "mset", "del", "unlink", "exists", "touch"}) {
    CAPTURE(n);
    CHECK((find_command(n)->flags & kSplittable) != 0);
  }
  CHECK((find_command("msetnx")->flags & (kSplittable | kKeyspaceWide)) == 0);
  CHECK((find_command("get")->flags & (kSplittable | kKeyspaceWide)) == 0);
}

TEST_CASE("find_command is case-insensitive") {
  REQUIRE(find_command("get") != nullptr);
  CHECK(find_command("GeT") == find_command("get"));
  CHECK((find_command("INCRBYFLOAT")->handler == cmd_incrbyfloat));
  CHECK((find_command("substr")->handler == cmd_getrange));
  CHECK(find_command("nosuch") == nullptr);
  CHECK(find_command("") == nullptr);
  CHECK(find_command(std::string(100, 'g')) == nullptr);
}

TEST_CASE("resolve_command picks subcommands and checks arity") {
  std::string error;
  std::vector<std::string_view> argv = {"CoNfIg", "GET", "x"};
  const CommandSpec* spec = resolve_command(argv, error);
  REQUIRE(spec != nullptr);
  CHECK((spec->handler == cmd_config_get));
  CHECK(command_fullname(*spec) == "config|get");
  argv = {"command"};
  spec = resolve_command(argv, error);
  REQUIRE(spec != nullptr);
  CHECK((spec->handler == cmd_command));
  CHECK(command_fullname(*spec) == "command");
}

TEST_CASE("resolve errors match Redis byte for byte") {
  CHECK(resolve_error({"foo"}) == "ERR unknown command 'foo', with args beginning with: ");
  CHECK(resolve_error({"foo", "a", "b"}) ==
        "ERR unknown command 'foo', with args beginning with: 'a' 'b' ");
  std::string x(100, 'x'), y(50, 'y');
  CHECK(resolve_error({"foo", x, y, "z"}) ==
        "ERR unknown command 'foo', with args beginning "
        "with: '" +
            x + "' '" + std::string(25, 'y') + "' ");
  std::string f(200, 'f');
  CHECK(resolve_error({f}) ==
        "ERR unknown command '" + std::string(128, 'f') + "', with args beginning with: ");
  CHECK(resolve_error({"config", "bar"}) == "ERR unknown subcommand 'bar'. Try CONFIG HELP.");
  std::string long_sub(200, 'x');
  CHECK(resolve_error({"Config", long_sub}) ==
        "ERR unknown subcommand '" + std::string(128, 'x') + "'. Try CONFIG HELP.");
  CHECK(resolve_error({"command", "foo"}) == "ERR unknown subcommand 'foo'. Try COMMAND HELP.");
  CHECK(resolve_error({"config"}) == "ERR wrong number of arguments for 'config' command");
  CHECK(resolve_error({"config", "GET"}) ==
        "ERR wrong number of arguments for 'config|get' command");
  CHECK(resolve_error({"get"}) == "ERR wrong number of arguments for 'get' command");
  CHECK(resolve_error({"object"}) == "ERR wrong number of arguments for 'object' command");
  CHECK(resolve_error({"get", "a", "b"}) == "ERR wrong number of arguments for 'get' command");
}

TEST_CASE("dispatch writes the error reply with CR/LF flattened") {
  CHECK(run({"foo", "a\r\nb"}) ==
        "-ERR unknown command 'foo', with args beginning with: 'a  b' \r\n");
  CHECK(run({"cOmmand", "CoUnt"}) == ":" + std::to_string(command_table().size()) + "\r\n");
}

TEST_CASE("key positions come from first/last/step") {
  using V = std::vector<size_t>;
  // argv of n arguments; only its length matters for these rows.
  auto args = [](size_t n) { return std::vector<std::string_view>(n, "x"); };
  CHECK(key_positions(*find_command("get"), args(2)) == V{1});
  CHECK(key_positions(*find_command("mset"), args(5)) == V{1, 3});
  CHECK(key_positions(*find_command("del"), args(4)) == V{1, 2, 3});
  CHECK(key_positions(*find_command("rename"), args(3)) == V{1, 2});
  CHECK(key_positions(*find_command("copy"), args(6)) == V{1, 2});
  CHECK(key_positions(*find_command("ping"), args(2)).empty());
  const CommandSpec& object = *find_command("object");
  const CommandSpec* encoding = nullptr;
  for (const CommandSpec& s : object.subcommands) {
    if (s.name == "encoding") encoding = &s;
  }
  REQUIRE(encoding != nullptr);
  CHECK(key_positions(*encoding, args(3)) == V{2});
}

TEST_CASE("usage text renders the plain syntax") {
  CHECK(usage_text(find_command("set")->syntax) ==
        "key value [NX | XX] [GET] [EX seconds | PX milliseconds | EXAT unix-time-seconds | PXAT "
        "unix-time-milliseconds | KEEPTTL]");
  CHECK(usage_text(find_command("mset")->syntax) == "key value [key value ...]");
  CHECK(usage_text(find_command("del")->syntax) == "key [key ...]");
  CHECK(usage_text(find_command("hello")->syntax) ==
        "[protover [AUTH username password] [SETNAME clientname]]");
}

TEST_CASE("malformed syntax is rejected") {
  std::vector<DocArg> args;
  CHECK_FALSE(parse_syntax("[a", args));
  CHECK_FALSE(parse_syntax("(x: a | b c)", args));
  CHECK_FALSE(parse_syntax("a<nosuchtype>", args));
  CHECK_FALSE(parse_syntax("a  b", args));
  CHECK(parse_syntax("key<key:1>", args));
  CHECK(args.at(0).key_spec_index == 1);
}

TEST_CASE("COMMAND INFO matches Redis (RESP2)") {
  CHECK(run({"command", "info", "get", "nosuch", "config|get"}) ==
        "*3\r\n*10\r\n$3\r\nget\r\n:2\r\n*2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n*3\r\n+@"
        "read\r\n+@string\r\n+@fast\r\n*0\r\n*1\r\n*6\r\n$5\r\nflags\r\n*2\r\n+RO\r\n+access\r\n$"
        "12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r"
        "\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$"
        "7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*0\r\n$-1\r\n*10\r\n$"
        "10\r\nconfig|get\r\n:-3\r\n*4\r\n+admin\r\n+noscript\r\n+loading\r\n+stale\r\n:0\r\n:"
        "0\r\n:0\r\n*3\r\n+@admin\r\n+@slow\r\n+@dangerous\r\n*0\r\n*0\r\n*0\r\n");
}

TEST_CASE("COMMAND INFO matches Redis (RESP3, notes and tips)") {
  CHECK(run({"command", "info", "set", "mset"}, RespVersion::kResp3) ==
        "*2\r\n*10\r\n$3\r\nset\r\n:-3\r\n~2\r\n+write\r\n+denyoom\r\n:1\r\n:1\r\n:1\r\n~3\r\n+@"
        "write\r\n+@string\r\n+@slow\r\n~0\r\n~1\r\n%4\r\n$5\r\nnotes\r\n$48\r\nRW and ACCESS due "
        "to the optional `GET` argument\r\n$5\r\nflags\r\n~4\r\n+RW\r\n+access\r\n+update\r\n+"
        "variable_flags\r\n$12\r\nbegin_search\r\n%2\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r"
        "\n%1\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n%2\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\n"
        "spec\r\n%3\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n~0\r\n*"
        "10\r\n$4\r\nmset\r\n:-3\r\n~2\r\n+write\r\n+denyoom\r\n:1\r\n:-1\r\n:2\r\n~3\r\n+@write\r"
        "\n+@string\r\n+@slow\r\n~2\r\n$26\r\nrequest_policy:multi_shard\r\n$29\r\nresponse_"
        "policy:all_succeeded\r\n~1\r\n%3\r\n$5\r\nflags\r\n~2\r\n+OW\r\n+update\r\n$12\r\nbegin_"
        "search\r\n%2\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n%1\r\n$5\r\nindex\r\n:1\r\n$"
        "9\r\nfind_keys\r\n%2\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n%3\r\n$7\r\nlastkey\r"
        "\n:-1\r\n$7\r\nkeystep\r\n:2\r\n$5\r\nlimit\r\n:0\r\n~0\r\n");
}

TEST_CASE("COMMAND DOCS matches Redis") {
  CHECK(run({"command", "docs", "nosuch", "config|get"}) ==
        "*2\r\n$10\r\nconfig|get\r\n*12\r\n$7\r\nsummary\r\n$42\r\nGet the values of "
        "configuration parameters\r\n$5\r\nsince\r\n$5\r\n2.0.0\r\n$5\r\ngroup\r\n$6\r\nserver\r"
        "\n$10\r\ncomplexity\r\n$62\r\nO(N) when N is the number of configuration parameters "
        "provided\r\n$7\r\nhistory\r\n*1\r\n*2\r\n$5\r\n7.0.0\r\n$65\r\nAdded the ability to "
        "pass multiple pattern parameters in one call\r\n$9\r\narguments\r\n*1\r\n*8\r\n$4\r\nname"
        "\r\n$9\r\nparameter\r\n$4\r\ntype\r\n$5\r\nblock\r\n$5\r\nflags\r\n*1\r\n+multiple\r\n$9"
        "\r\narguments\r\n*1\r\n*4\r\n$4\r\nname\r\n$9\r\nparameter\r\n$4\r\ntype\r\n$6\r\nstring"
        "\r\n");
  CHECK(run({"command", "docs", "getset"}, RespVersion::kResp3) ==
        "%1\r\n$6\r\ngetset\r\n%8\r\n$7\r\nsummary\r\n$54\r\nSet the string value of a key and "
        "return its old value\r\n$5\r\nsince\r\n$5\r\n1.0.0\r\n$5\r\ngroup\r\n$6\r\nstring\r\n$"
        "10\r\ncomplexity\r\n$4\r\nO(1)\r\n$9\r\ndoc_flags\r\n~1\r\n+deprecated\r\n$16\r\ndeprecat"
        "ed_since\r\n$5\r\n6.2.0\r\n$11\r\nreplaced_by\r\n$30\r\n`SET` with the `!GET` "
        "argument\r\n$9\r\narguments\r\n*2\r\n%3\r\n$4\r\nname\r\n$3\r\nkey\r\n$4\r\ntype\r\n$3\r"
        "\nkey\r\n$14\r\nkey_spec_index\r\n:0\r\n%2\r\n$4\r\nname\r\n$5\r\nvalue\r\n$4\r\ntype\r"
        "\n$6\r\nstring\r\n");
}

TEST_CASE("COMMAND DOCS SET nests oneofs with tokens and versions (RESP3)") {
  std::string docs = run({"command", "docs", "set"}, RespVersion::kResp3);
  CHECK(docs.find("%5\r\n$4\r\nname\r\n$9\r\ncondition\r\n$4\r\ntype\r\n$5\r\noneof\r\n$5\r\n"
                  "since\r\n$6\r\n2.6.12\r\n$5\r\nflags\r\n~1\r\n+optional\r\n$9\r\narguments\r\n*"
                  "2\r\n%3\r\n$4\r\nname\r\n$2\r\nnx\r\n$4\r\ntype\r\n$10\r\npure-token\r\n$5\r\n"
                  "token\r\n$2\r\nNX\r\n") != std::string::npos);
  CHECK(docs.find("%4\r\n$4\r\nname\r\n$17\r\nunix-time-seconds\r\n$4\r\ntype\r\n$9\r\nunix-"
                  "time\r\n$5\r\ntoken\r\n$4\r\nEXAT\r\n$5\r\nsince\r\n$5\r\n6.2.0\r\n") !=
        std::string::npos);
}

TEST_CASE("COMMAND COUNT, LIST, GETKEYS and GETKEYSANDFLAGS") {
  CHECK(run({"command", "count"}) == ":" + std::to_string(command_table().size()) + "\r\n");
  std::string all = run({"command", "list"});
  size_t rows = 0;
  for (const auto& spec : command_table()) rows += 1 + spec.subcommands.size();
  CHECK(all.starts_with("*" + std::to_string(rows) + "\r\n"));
  CHECK(all.find("$10\r\nconfig|get\r\n") != std::string::npos);
  CHECK(run({"command", "list", "filterby", "pattern", "CONFIG|*et"}) ==
        "*2\r\n$10\r\nconfig|get\r\n$10\r\nconfig|set\r\n");
  CHECK(run({"command", "list", "FILTERBY", "aclcat", "nosuch"}) == "*0\r\n");
  CHECK(run({"command", "list", "filterby", "aclcat", "dangerous"}).starts_with("*"));
  CHECK(run({"command", "list", "filterby", "module", "x"}) == "*0\r\n");
  CHECK(run({"command", "list", "filterby", "foo", "x"}) == "-ERR syntax error\r\n");
  CHECK(run({"command", "list", "x"}) == "-ERR syntax error\r\n");
  CHECK(run({"command", "getkeys", "mset", "a", "b", "c", "d"}) == "*2\r\n$1\r\na\r\n$1\r\nc\r\n");
  CHECK(run({"command", "getkeys", "object", "encoding", "k"}) == "*1\r\n$1\r\nk\r\n");
  CHECK(run({"command", "getkeys", "config", "foo"}) == "-ERR Invalid command specified\r\n");
  CHECK(run({"command", "getkeys", "ping", "x"}) == "-ERR The command has no key arguments\r\n");
  CHECK(run({"command", "getkeys", "get", "a", "b"}) ==
        "-ERR Invalid number of arguments specified for command\r\n");
  CHECK(run({"command", "getkeys", "get"}) ==
        "-ERR wrong number of arguments for 'command|getkeys' command\r\n");
  CHECK(run({"command", "getkeysandflags", "lmove", "a", "b", "left", "right"}) ==
        "*2\r\n*2\r\n$1\r\na\r\n*3\r\n+RW\r\n+access\r\n+delete\r\n"
        "*2\r\n$1\r\nb\r\n*2\r\n+RW\r\n+insert\r\n");
  CHECK(run({"command", "getkeysandflags", "sort", "k", "store", "d"}) ==
        "*2\r\n*2\r\n$1\r\nk\r\n*2\r\n+RO\r\n+access\r\n"
        "*2\r\n$1\r\nd\r\n*2\r\n+OW\r\n+update\r\n");
  CHECK(run({"command", "getkeys", "spublish", "ch", "m"}) ==
        "-ERR The command has no key arguments\r\n");
  CHECK(run({"command", "help"})
            .starts_with(
                "*21\r\n+COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n"));
  CHECK(run({"command"}).starts_with("*" + std::to_string(command_table().size()) + "\r\n*10\r\n"));
}

TEST_CASE("rename-command: clients reach renamed commands by their new names only") {
  using Renames = std::vector<std::pair<std::string, std::string>>;
  REQUIRE(set_command_renames(Renames{{"FLUSHALL", ""}, {"config", "CFG_x1"}}).empty());
  CHECK(find_client_command("flushall") == nullptr);
  CHECK(find_client_command("config") == nullptr);
  CHECK(find_client_command("cfg_X1") == find_command("config"));
  CHECK(find_client_command("get") == find_command("get"));
  CHECK(original_command_name("CFG_x1") == "config");
  CHECK(original_command_name("get").empty());
  CHECK_FALSE(command_enabled(*find_command("flushall")));
  CHECK(command_enabled(*find_command("config")));
  CHECK(command_enabled(*find_subcommand(*find_command("config"), "get")));

  std::string error;
  std::vector<std::string_view> argv = {"CFG_x1", "nosuch"};
  CHECK(resolve_client_command(argv, error) == nullptr);
  CHECK(error == "ERR unknown subcommand 'nosuch'. Try CFG_X1 HELP.");
  argv = {"cfg_x1", "get", "port"};
  CHECK(resolve_client_command(argv, error) == find_subcommand(*find_command("config"), "get"));
  argv = {"config", "get", "port"};
  CHECK(resolve_client_command(argv, error) == nullptr);
  CHECK(error == "ERR unknown command 'config', with args beginning with: 'get' 'port' ");
  // Internal lookups keep the table's names.
  CHECK(resolve_command(argv, error) != nullptr);

  CHECK(set_command_renames(Renames{{"nosuch", "x"}}) == "no such command 'nosuch'");
  CHECK(set_command_renames(Renames{{"get", "SET"}}) ==
        "cannot rename 'get' to 'SET': that command name already exists");
  // A failed call leaves the earlier renames in place; an empty list lifts them.
  CHECK(find_client_command("config") == nullptr);
  REQUIRE(set_command_renames(Renames{}).empty());
  CHECK(find_client_command("config") == find_command("config"));
  CHECK(original_command_name("CFG_x1").empty());
}

TEST_CASE("first/last/step come from the key specs, as Redis derives them") {
  // One index+range spec is taken as it is; of several, the range specs of step 1 that follow
  // each other are joined and every other spec is skipped; no usable range spec gives 0 0 0.
  // Redis 7.0.15's COMMAND INFO for the specs of these commands:
  auto range = [](std::string_view specs) {
    const KeySpecs k(specs);
    return std::array<int, 3>{k.first, k.last, k.step};
  };
  using R = std::array<int, 3>;
  CHECK(range("RO access|1|0|1|0") == R{1, 1, 1});                                  // GET
  CHECK(range("RM delete|1|-1|1|0") == R{1, -1, 1});                                // DEL
  CHECK(range("OW update|1|-1|2|0") == R{1, -1, 2});                                // MSET
  CHECK(range("RW access delete|1|-2|1|0") == R{1, -2, 1});                         // BLPOP
  CHECK(range("RW access delete|1|keynum|0,1,1") == R{0, 0, 0});                    // LMPOP
  CHECK(range("RW access update|2|keynum|0,1,1") == R{0, 0, 0});                    // EVAL
  CHECK(range("OW update|1|0|1|0;RO access|2|keynum|0,1,1") == R{1, 1, 1});         // ZUNIONSTORE
  CHECK(range("RW access delete|1|0|1|0;RW insert|2|0|1|0") == R{1, 2, 1});         // LMOVE
  CHECK(range("RO access|1|0|1|0;OW update|unknown|unknown|0|0") == R{1, 1, 1});    // SORT
  CHECK(range("RO access|keyword:STREAMS:1|-1|2|0") == R{0, 0, 0});                 // XREAD
  CHECK(range("RO access|1|0|1|0;OW update|keyword:STORE:6|0|1|0") == R{1, 1, 1});  // GEORADIUS
  CHECK(range("") == R{0, 0, 0});
  // Ranges that do not follow each other: only the first counts.
  CHECK(range("RW|1|0|1|0;RO|3|0|1|0") == R{1, 1, 1});
  // Of joined ranges, one counted from the end wins the last key (Redis compares as unsigned).
  CHECK(range("RW|1|0|1|0;RO|2|-1|1|0") == R{1, -1, 1});
  // Derived while the program is compiled (the tables are constant).
  static_assert(KeySpecs("OW update|1|-1|2|0").step == 2);
}

TEST_CASE("rows whose key specs cannot say what they do to their keys have a flags finder") {
  // Redis asks its own key finder for these: variable_flags, or a begin search marked unknown.
  auto check = [](const CommandSpec& spec) {
    const bool needs = spec.key_specs.text.find("variable_flags") != std::string_view::npos ||
                       spec.key_specs.text.find("|unknown|") != std::string_view::npos;
    INFO(spec.name);
    CHECK(needs == (spec.find_key_flags != nullptr));
  };
  for (const CommandSpec& row : command_table()) {
    check(row);
    for (const CommandSpec& sub : row.subcommands) check(sub);
  }
}

TEST_CASE("COMMAND INFO and COMMAND DOCS of MOVE and SWAPDB match Redis") {
  CHECK(
      run({"command", "info", "move", "swapdb"}) ==
      "*2\r\n*10\r\n$4\r\nmove\r\n:3\r\n*2\r\n+write\r\n+fast\r\n:1\r\n:1\r\n:1\r\n*3\r\n+@"
      "keyspace\r\n+@write\r\n+@fast\r\n*0\r\n*1\r\n*6\r\n$5\r\nflags\r\n*3\r\n+RW\r\n+access\r\n+"
      "update\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$"
      "5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*"
      "6\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*0\r\n*10\r\n$"
      "6\r\nswapdb\r\n:3\r\n*2\r\n+write\r\n+fast\r\n:0\r\n:0\r\n:0\r\n*4\r\n+@keyspace\r\n+@"
      "write\r\n+@fast\r\n+@dangerous\r\n*0\r\n*0\r\n*0\r\n");
  CHECK(
      run({"command", "docs", "move", "swapdb"}) ==
      "*4\r\n$4\r\nmove\r\n*10\r\n$7\r\nsummary\r\n$30\r\nMove a key to another database\r\n$"
      "5\r\nsince\r\n$5\r\n1.0.0\r\n$5\r\ngroup\r\n$7\r\ngeneric\r\n$10\r\ncomplexity\r\n$4\r\nO("
      "1)\r\n$9\r\narguments\r\n*2\r\n*6\r\n$4\r\nname\r\n$3\r\nkey\r\n$4\r\ntype\r\n$3\r\nkey\r\n$"
      "14\r\nkey_spec_index\r\n:0\r\n*4\r\n$4\r\nname\r\n$2\r\ndb\r\n$4\r\ntype\r\n$7\r\ninteger\r"
      "\n$6\r\nswapdb\r\n*10\r\n$7\r\nsummary\r\n$25\r\nSwaps two Redis databases\r\n$5\r\nsince\r"
      "\n$5\r\n4.0.0\r\n$5\r\ngroup\r\n$6\r\nserver\r\n$10\r\ncomplexity\r\n$86\r\nO(N) where N "
      "is the count of clients watching or blocking on keys from both databases.\r\n$9\r\nargume"
      "nts\r\n*2\r\n*4\r\n$4\r\nname\r\n$6\r\nindex1\r\n$4\r\ntype\r\n$7\r\ninteger\r\n*4\r\n$4\r"
      "\nname\r\n$6\r\nindex2\r\n$4\r\ntype\r\n$7\r\ninteger\r\n");
}
