// Connection and server handlers (PING … CLIENT, INFO, CONFIG, SHUTDOWN) through a fake
// ClientSession and ServerControl; expected replies recorded from redis-server 7.0.15.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "conf/config.h"
#include "engine/acl/acl_users.h"
#include "engine/command.h"
#include "engine/keyspace/store.h"

using namespace ringkv::engine;
using ringkv::protocol::ReplyWriter;
using ringkv::protocol::RespVersion;

namespace {

class FakeClient : public ClientSession {
 public:
  uint64_t id() const override { return 10; }
  std::string_view name() const override { return name_; }
  void set_name(std::string_view name) override { name_ = name; }
  RespVersion resp() const override { return resp_; }
  void set_resp(RespVersion v) override { resp_ = v; }
  int db() const override { return 0; }
  void close_after_reply() override { closing_ = true; }
  void reset_state() override {
    name_.clear();
    resp_ = RespVersion::kResp2;
    resets_++;
  }
  std::string info_line() const override { return "id=10 name=" + name_; }

  std::string name_;
  RespVersion resp_ = RespVersion::kResp2;
  bool closing_ = false;
  int resets_ = 0;
};

class FakeServer : public ServerControl {
 public:
  std::string info(std::span<const std::string_view> sections) override {
    info_sections_.assign(sections.begin(), sections.end());
    return "# Server\r\nredis_version:7.0.15\r\n";
  }
  std::string client_list(std::span<const uint64_t> ids, std::optional<ClientKind> kind) override {
    listed_ids_.assign(ids.begin(), ids.end());
    listed_kind_ = kind;
    return "id=10 name=\n";
  }
  size_t kill_clients(const ClientKillFilter& filter) override {
    kill_filter_ = filter;
    ++kill_calls_;
    return kill_result_;
  }
  void config_get(std::string_view pattern,
                  std::vector<std::pair<std::string, std::string>>& out) override {
    if (pattern == "maxmemory" || pattern == "max*") out.emplace_back("maxmemory", "0");
    if (pattern == "max*") out.emplace_back("maxclients", "10000");
  }
  std::string config_set(
      std::span<const std::pair<std::string_view, std::string_view>> pairs) override {
    return ringkv::conf::set_parameters(config_, pairs);
  }
  void multi(ringkv::engine::CommandContext&) override {}
  void exec(ringkv::engine::CommandContext&) override {}
  void discard(ringkv::engine::CommandContext&) override {}
  void watch(ringkv::engine::CommandContext&) override {}
  void unwatch(ringkv::engine::CommandContext&) override {}
  void config_resetstat() override { ++resetstats_; }
  void shutdown() override { ++shutdowns_; }
  int64_t last_save_unix() const override { return 1796015239; }
  acl::Users* acl_users() override { return &users_; }

  std::vector<std::string> info_sections_;
  std::vector<uint64_t> listed_ids_;
  std::optional<ClientKind> listed_kind_;
  ClientKillFilter kill_filter_;
  int kill_calls_ = 0;
  size_t kill_result_ = 0;
  ringkv::conf::Config config_;
  acl::Users users_;
  int resetstats_ = 0;
  int shutdowns_ = 0;
};

struct Harness {
  FakeClient client;
  FakeServer server;
  Store store;
  RespVersion version = RespVersion::kResp2;

  std::string run(std::vector<std::string_view> argv) {
    std::string out;
    ReplyWriter reply(out, version);
    CommandContext ctx{argv, reply, store, &client, &server, nullptr};
    dispatch(ctx);
    version = reply.version();
    return out;
  }
};

constexpr std::string_view kHello2 =
    "*14\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$6\r\n7.0.15\r\n$5\r\nproto\r\n:"
    "2\r\n$2\r\nid\r\n:10\r\n$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$"
    "7\r\nmodules\r\n*0\r\n";
constexpr std::string_view kHello3 =
    "%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$6\r\n7.0.15\r\n$5\r\nproto\r\n:"
    "3\r\n$2\r\nid\r\n:10\r\n$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$"
    "7\r\nmodules\r\n*0\r\n";

}  // namespace

TEST_CASE("PING, ECHO, QUIT") {
  Harness h;
  CHECK(h.run({"PING"}) == "+PONG\r\n");
  CHECK(h.run({"ping", "hi"}) == "$2\r\nhi\r\n");
  CHECK(h.run({"PING", "a", "b"}) == "-ERR wrong number of arguments for 'ping' command\r\n");
  h.version = RespVersion::kResp3;
  CHECK(h.run({"PING"}) == "+PONG\r\n");
  CHECK(h.run({"ECHO", "x"}) == "$1\r\nx\r\n");
  CHECK(h.run({"ECHO"}) == "-ERR wrong number of arguments for 'echo' command\r\n");
  CHECK_FALSE(h.client.closing_);
  CHECK(h.run({"QUIT"}) == "+OK\r\n");
  CHECK(h.client.closing_);
}

TEST_CASE("SELECT without a server's databases accepts only database 0") {
  Harness h;
  CHECK(h.run({"SELECT", "0"}) == "+OK\r\n");
  CHECK(h.run({"SELECT", "1"}) == "-ERR DB index is out of range\r\n");
  CHECK(h.run({"SELECT", "-1"}) == "-ERR DB index is out of range\r\n");
  CHECK(h.run({"SELECT", "x"}) == "-ERR value is not an integer or out of range\r\n");
  CHECK(h.run({"SELECT", "99999999999999999999"}) ==
        "-ERR value is not an integer or out of range\r\n");
  CHECK(h.run({"SELECT", "4294967296"}) ==
        "-ERR value is out of range, value must between -2147483648 and 2147483647\r\n");
  CHECK(h.run({"SELECT", "00"}) == "-ERR value is not an integer or out of range\r\n");
}

TEST_CASE("HELLO switches protocol and validates options") {
  Harness h;
  CHECK(h.run({"HELLO"}) == kHello2);
  CHECK(h.run({"HELLO", "4"}) == "-NOPROTO unsupported protocol version\r\n");
  CHECK(h.run({"HELLO", "1"}) == "-NOPROTO unsupported protocol version\r\n");
  CHECK(h.run({"HELLO", "abc"}) == "-ERR Protocol version is not an integer or out of range\r\n");
  CHECK(h.run({"HELLO", "3", "AUTH", "default"}) == "-ERR Syntax error in HELLO option 'AUTH'\r\n");
  CHECK(h.run({"HELLO", "2", "FOO"}) == "-ERR Syntax error in HELLO option 'FOO'\r\n");
  CHECK(h.run({"HELLO", "3", "AUTH", "bob", "x"}) ==
        "-WRONGPASS invalid username-password pair or user is disabled.\r\n");
  CHECK(h.run({"HELLO", "2", "SETNAME", "a b"}) ==
        "-ERR Client names cannot contain spaces, newlines or special characters.\r\n");
  CHECK(h.client.resp_ == RespVersion::kResp2);
  CHECK(h.run({"HELLO", "3", "AUTH", "default", "x", "SETNAME", "n1"}) == kHello3);
  CHECK(h.client.resp_ == RespVersion::kResp3);
  CHECK(h.client.name_ == "n1");
  CHECK(h.run({"hello", "2"}) == kHello2);
  CHECK(h.client.resp_ == RespVersion::kResp2);
}

TEST_CASE("AUTH with no password configured") {
  Harness h;
  CHECK(h.run({"AUTH", "x"}) ==
        "-ERR AUTH <password> called without any password configured for the default user. Are "
        "you sure your configuration is correct?\r\n");
  CHECK(h.run({"AUTH", "default", "anything"}) == "+OK\r\n");
  CHECK(h.run({"AUTH", "bob", "x"}) ==
        "-WRONGPASS invalid username-password pair or user is disabled.\r\n");
  CHECK(h.run({"AUTH", "a", "b", "c"}) == "-ERR syntax error\r\n");
}

TEST_CASE("RESET returns to a fresh connection") {
  Harness h;
  h.run({"HELLO", "3", "SETNAME", "x"});
  CHECK(h.run({"RESET"}) == "+RESET\r\n");
  CHECK(h.client.resets_ == 1);
  CHECK(h.version == RespVersion::kResp2);
}

TEST_CASE("CLIENT ID, SETNAME, GETNAME, INFO") {
  Harness h;
  CHECK(h.run({"CLIENT", "ID"}) == ":10\r\n");
  CHECK(h.run({"CLIENT", "GETNAME"}) == "$-1\r\n");
  CHECK(h.run({"CLIENT", "SETNAME", "a b"}) ==
        "-ERR Client names cannot contain spaces, newlines or special characters.\r\n");
  CHECK(h.run({"CLIENT", "SETNAME", "x\n"}) ==
        "-ERR Client names cannot contain spaces, newlines or special characters.\r\n");
  CHECK(h.run({"client", "setname", "me"}) == "+OK\r\n");
  CHECK(h.run({"CLIENT", "GETNAME"}) == "$2\r\nme\r\n");
  CHECK(h.run({"CLIENT", "SETNAME", ""}) == "+OK\r\n");
  CHECK(h.run({"CLIENT", "GETNAME"}) == "$-1\r\n");
  CHECK(h.run({"CLIENT", "INFO"}) == "$12\r\nid=10 name=\n\r\n");
  h.version = RespVersion::kResp3;
  CHECK(h.run({"CLIENT", "INFO"}) == "=16\r\ntxt:id=10 name=\n\r\n");
  CHECK(h.run({"CLIENT", "FOO"}) == "-ERR unknown subcommand 'FOO'. Try CLIENT HELP.\r\n");
  CHECK(h.run({"CLIENT", "HELP"})
            .starts_with("*48\r\n+CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands "
                         "are:\r\n+CACHING (YES|NO)\r\n"));
}

TEST_CASE("CLIENT LIST filters") {
  Harness h;
  CHECK(h.run({"CLIENT", "LIST"}) == "$12\r\nid=10 name=\n\r\n");
  CHECK(h.server.listed_ids_.empty());
  CHECK(h.run({"CLIENT", "LIST", "TYPE", "foo"}) == "-ERR Unknown client type 'foo'\r\n");
  CHECK(h.run({"CLIENT", "LIST", "TYPE", "master"}) == "$0\r\n\r\n");
  CHECK(h.run({"CLIENT", "LIST", "TYPE", "NORMAL"}) == "$12\r\nid=10 name=\n\r\n");
  CHECK(h.server.listed_kind_ == ClientKind::kNormal);
  CHECK(h.run({"CLIENT", "LIST", "TYPE", "pubsub"}) == "$12\r\nid=10 name=\n\r\n");
  CHECK(h.server.listed_kind_ == ClientKind::kPubSub);
  CHECK(h.run({"CLIENT", "LIST", "TYPE", "peer"}) == "$12\r\nid=10 name=\n\r\n");
  CHECK(h.server.listed_kind_ == ClientKind::kPeer);
  CHECK(h.run({"CLIENT", "LIST", "ID", "x"}) == "-ERR Invalid client ID\r\n");
  CHECK(h.run({"CLIENT", "LIST", "ID", "10", "0"}) == "$12\r\nid=10 name=\n\r\n");
  CHECK(h.server.listed_ids_ == std::vector<uint64_t>{10, 0});
  CHECK(h.run({"CLIENT", "LIST", "foo"}) == "-ERR syntax error\r\n");
  CHECK(h.run({"CLIENT", "LIST", "ID"}) == "-ERR syntax error\r\n");
}

TEST_CASE("CLIENT KILL old and new forms") {
  Harness h;
  CHECK(h.run({"CLIENT", "KILL", "1.2.3.4:5"}) == "-ERR No such client\r\n");
  CHECK(h.server.kill_filter_.addr == "1.2.3.4:5");
  CHECK_FALSE(h.server.kill_filter_.skipme);
  h.server.kill_result_ = 1;
  CHECK(h.run({"CLIENT", "KILL", "1.2.3.4:5"}) == "+OK\r\n");
  CHECK(h.run({"CLIENT", "KILL", "ID", "999"}) == ":1\r\n");
  CHECK(h.server.kill_filter_.id == 999u);
  CHECK(h.server.kill_filter_.skipme);
  CHECK(h.server.kill_filter_.self_id == 10u);
  CHECK(h.run({"CLIENT", "KILL", "ADDR", "a:1", "LADDR", "b:2", "SKIPME", "no"}) == ":1\r\n");
  CHECK(h.server.kill_filter_.addr == "a:1");
  CHECK(h.server.kill_filter_.laddr == "b:2");
  CHECK_FALSE(h.server.kill_filter_.skipme);
  int calls = h.server.kill_calls_;
  CHECK(h.run({"CLIENT", "KILL", "TYPE", "master"}) == ":0\r\n");
  CHECK(h.server.kill_calls_ == calls);
  CHECK(h.run({"CLIENT", "KILL", "TYPE", "normal"}) == ":1\r\n");
  CHECK(h.server.kill_filter_.kind == ClientKind::kNormal);
  CHECK(h.run({"CLIENT", "KILL", "TYPE", "peer"}) == ":1\r\n");
  CHECK(h.server.kill_filter_.kind == ClientKind::kPeer);
  CHECK(h.run({"CLIENT", "KILL", "ID", "x"}) == "-ERR client-id should be greater than 0\r\n");
  CHECK(h.run({"CLIENT", "KILL", "ID", "-5"}) == "-ERR client-id should be greater than 0\r\n");
  CHECK(h.run({"CLIENT", "KILL", "TYPE", "foo"}) == "-ERR Unknown client type 'foo'\r\n");
  CHECK(h.run({"CLIENT", "KILL", "SKIPME", "maybe"}) == "-ERR syntax error\r\n");
  CHECK(h.run({"CLIENT", "KILL", "FOO", "x"}) == "-ERR syntax error\r\n");
  CHECK(h.run({"CLIENT", "KILL", "USER", "nobody"}) == "-ERR No such user 'nobody'\r\n");
  CHECK(h.run({"CLIENT", "KILL", "ID", "1", "ADDR"}) == "-ERR syntax error\r\n");
  CHECK(h.run({"CLIENT", "KILL", "ID", "x", "ADDR"}) ==
        "-ERR client-id should be greater than 0\r\n");
  CHECK(h.run({"CLIENT", "KILL", "USER", "default", "SKIPME", "yes"}) == ":1\r\n");
}

TEST_CASE("INFO passes lowercase sections and replies verbatim in RESP3") {
  Harness h;
  CHECK(h.run({"INFO", "Server", "CPU"}) == "$32\r\n# Server\r\nredis_version:7.0.15\r\n\r\n");
  CHECK(h.server.info_sections_ == std::vector<std::string>{"server", "cpu"});
  h.version = RespVersion::kResp3;
  CHECK(h.run({"INFO"}) == "=36\r\ntxt:# Server\r\nredis_version:7.0.15\r\n\r\n");
  CHECK(h.server.info_sections_.empty());
}

TEST_CASE("CONFIG GET, SET, RESETSTAT, HELP") {
  Harness h;
  CHECK(h.run({"CONFIG", "GET", "maxmemory", "max*"}) ==
        "*4\r\n$9\r\nmaxmemory\r\n$1\r\n0\r\n$10\r\nmaxclients\r\n$5\r\n10000\r\n");
  h.version = RespVersion::kResp3;
  CHECK(h.run({"CONFIG", "GET", "nosuch"}) == "%0\r\n");
  CHECK(h.run({"CONFIG", "SET", "maxclients", "1", "maxclients", "2"}) ==
        "-ERR CONFIG SET failed (possibly related to argument 'maxclients') - duplicate "
        "parameter\r\n");
  CHECK(h.run({"CONFIG", "SET", "foo", "1"}) ==
        "-ERR Unknown option or number of arguments for CONFIG SET - 'foo'\r\n");
  CHECK(h.run({"CONFIG", "SET", "a", "1", "b"}) == "-ERR syntax error\r\n");
  CHECK(h.run({"CONFIG", "SET", "maxclients", "5", "timeout", "x"}) ==
        "-ERR CONFIG SET failed (possibly related to argument 'timeout') - argument couldn't be "
        "parsed into an integer\r\n");
  CHECK(h.server.config_.server.maxclients == 10000);
  CHECK(h.run({"CONFIG", "SET", "maxclients", "5", "proto-max-bulk-len", "5mb"}) == "+OK\r\n");
  CHECK(h.server.config_.server.maxclients == 5);
  CHECK(h.server.config_.server.proto_max_bulk_len == 5 * 1024 * 1024);
  CHECK(h.run({"CONFIG", "RESETSTAT"}) == "+OK\r\n");
  CHECK(h.server.resetstats_ == 1);
  CHECK(h.run({"CONFIG", "HELP"}).starts_with("*11\r\n+CONFIG <subcommand>"));
}

TEST_CASE("TIME, LASTSAVE, SHUTDOWN") {
  Harness h;
  std::string time = h.run({"TIME"});
  CHECK(time.starts_with("*2\r\n$10\r\n"));
  CHECK(h.run({"LASTSAVE"}) == ":1796015239\r\n");
  CHECK(h.run({"SHUTDOWN", "ABORT"}) == "-ERR No shutdown in progress.\r\n");
  CHECK(h.run({"SHUTDOWN", "NOW", "ABORT"}) == "-ERR syntax error\r\n");
  CHECK(h.run({"SHUTDOWN", "foo"}) == "-ERR syntax error\r\n");
  CHECK(h.run({"SHUTDOWN", "SAVE", "NOSAVE"}) == "-ERR syntax error\r\n");
  CHECK(h.server.shutdowns_ == 0);
  CHECK(h.run({"SHUTDOWN", "nosave", "now", "force"}) == "");
  CHECK(h.server.shutdowns_ == 1);
}
