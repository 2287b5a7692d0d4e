// Unit tests of conf/: defaults, TOML loading, flags over the file, error messages, Redis size
// and integer parsing, --print-config round trips and CONFIG GET/SET.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "conf/config.h"

using namespace ringkv::conf;

namespace {

// Runs parse_command_line on a list of arguments (argv[0] is added).
ParseOutcome run(std::vector<std::string> args) {
  std::vector<const char*> argv = {"ringkv-server"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  return parse_command_line(static_cast<int>(argv.size()), argv.data());
}

// A TOML file in /tmp that is removed when the test ends.
class TempFile {
 public:
  explicit TempFile(const std::string& text)
      : path_("/tmp/ringkv-test-config-" + std::to_string(counter_++) + ".toml") {
    std::ofstream(path_) << text;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  std::string path_;
};

// The error load_string gives for `text`, with "t.toml" as the file name.
std::string load_error(const std::string& text) {
  Config config;
  return load_string(text, "t.toml", config);
}

std::string get(const Config& config, std::string_view name) {
  const Parameter* p = find_parameter(name);
  REQUIRE(p != nullptr);
  return p->get(config);
}

const std::string kEveryKey = R"(
[server]
bind = "0.0.0.0"
port = 7001
maxclients = 50
timeout = 30
proto-max-bulk-len = "2mb"
hz = 20

[cluster]
self = "10.0.0.1:7001"
peers = ["10.0.0.2:7002", { addr = "10.0.0.3:7003", weight = 2 }]
replicas = 160
hash = "balanced"
pool-size = 4
connect-timeout = 250
request-timeout = 3000

[log]
level = "debug"
file = "/var/log/ringkv.log"
)";

}  // namespace

TEST_CASE("defaults") {
  Config c;
  CHECK(c.server.bind == "127.0.0.1");
  CHECK(c.server.port == 7379);
  CHECK(c.server.maxclients == 10000);
  CHECK(c.server.timeout == 0);
  CHECK(c.server.proto_max_bulk_len == 536870912);
  CHECK(c.server.hz == 10);
  CHECK(c.cluster.self.empty());
  CHECK(c.cluster.peers.empty());
  CHECK(c.cluster.replicas == 100);
  CHECK(c.cluster.hash == "balanced");
  CHECK(c.cluster.pool_size == 2);
  CHECK(c.cluster.connect_timeout_ms == 1000);
  CHECK(c.cluster.request_timeout_ms == 5000);
  CHECK(c.log.level == "info");
  CHECK(c.log.file.empty());

  ParseOutcome out = run({});
  REQUIRE(out.config);
  CHECK(out.config->cluster.self == "127.0.0.1:7379");
  CHECK(out.config->source_file.empty());
}

TEST_CASE("loading every key") {
  Config c;
  REQUIRE(load_string(kEveryKey, "t.toml", c) == "");
  CHECK(c.server.bind == "0.0.0.0");
  CHECK(c.server.port == 7001);
  CHECK(c.server.maxclients == 50);
  CHECK(c.server.timeout == 30);
  CHECK(c.server.proto_max_bulk_len == 2 * 1024 * 1024);
  CHECK(c.server.hz == 20);
  CHECK(c.cluster.self == "10.0.0.1:7001");
  REQUIRE(c.cluster.peers.size() == 2);
  CHECK(c.cluster.peers[0] == PeerOptions{"10.0.0.2:7002", 1});
  CHECK(c.cluster.peers[1] == PeerOptions{"10.0.0.3:7003", 2});
  CHECK(c.cluster.replicas == 160);
  CHECK(c.cluster.hash == "balanced");
  CHECK(c.cluster.pool_size == 4);
  CHECK(c.cluster.connect_timeout_ms == 250);
  CHECK(c.cluster.request_timeout_ms == 3000);
  CHECK(c.log.level == "debug");
  CHECK(c.log.file == "/var/log/ringkv.log");
}

TEST_CASE("values are normalised when loaded") {
  Config c;
  REQUIRE(load_string("[server]\nproto-max-bulk-len = 1048576\nhz = 1000\n[log]\nlevel = "
                      "\"NOTICE\"\n[cluster]\nhash = \"CRC32\"\n",
                      "t.toml", c) == "");
  CHECK(c.server.proto_max_bulk_len == 1048576);
  CHECK(c.server.hz == 500);  // Redis accepts any hz and clamps it to 1..500
  CHECK(c.log.level == "info");
  CHECK(c.cluster.hash == "crc32");
  REQUIRE(load_string("[server]\nhz = 0\n", "t.toml", c) == "");
  CHECK(c.server.hz == 1);
}

TEST_CASE("the tie-breaker is a member's host:port or nothing") {
  Config c;
  CHECK(c.cluster.tie_breaker.empty());
  REQUIRE(load_string("[cluster]\ntie-breaker = \"10.0.0.1:7001\"\n", "t.toml", c) == "");
  CHECK(c.cluster.tie_breaker == "10.0.0.1:7001");
  const std::string error = load_string("[cluster]\ntie-breaker = \"node-1\"\n", "t.toml", c);
  CHECK(error.find("tie-breaker") != std::string::npos);
}

TEST_CASE("loading a file and flags over the file") {
  TempFile file(kEveryKey);
  ParseOutcome out = run({"--config", file.path()});
  REQUIRE(out.config);
  CHECK(out.config->source_file == file.path());
  CHECK(out.config->server.port == 7001);
  CHECK(out.config->cluster.self == "10.0.0.1:7001");

  out = run({"--config",
             file.path(),
             "--port",
             "7005",
             "--bind",
             "::1",
             "--maxclients",
             "7",
             "--timeout",
             "9",
             "--proto-max-bulk-len",
             "1gb",
             "--hz",
             "50",
             "--self",
             "[::1]:7005",
             "--peers",
             "a:1,b:2=3",
             "--peers",
             "c:3",
             "--replicas",
             "10",
             "--hash",
             "crc32",
             "--pool-size",
             "1",
             "--connect-timeout",
             "5",
             "--request-timeout",
             "6",
             "--log-level",
             "warning",
             "--logfile",
             "x.log"});
  REQUIRE(out.config);
  const Config& c = *out.config;
  CHECK(c.server.port == 7005);
  CHECK(c.server.bind == "::1");
  CHECK(c.server.maxclients == 7);
  CHECK(c.server.timeout == 9);
  CHECK(c.server.proto_max_bulk_len == 1073741824);
  CHECK(c.server.hz == 50);
  CHECK(c.cluster.self == "[::1]:7005");
  REQUIRE(c.cluster.peers.size() == 3);
  CHECK(c.cluster.peers[1] == PeerOptions{"b:2", 3});
  CHECK(c.cluster.peers[2] == PeerOptions{"c:3", 1});
  CHECK(c.cluster.replicas == 10);
  CHECK(c.cluster.hash == "crc32");
  CHECK(c.cluster.pool_size == 1);
  CHECK(c.cluster.connect_timeout_ms == 5);
  CHECK(c.cluster.request_timeout_ms == 6);
  CHECK(c.log.level == "warn");
  CHECK(c.log.file == "x.log");

  // self follows a port given on the command line when the file leaves it empty.
  TempFile plain("[server]\nport = 7002\n");
  out = run({"--config", plain.path(), "--port=7003", "--loglevel", "trace"});
  REQUIRE(out.config);
  CHECK(out.config->cluster.self == "127.0.0.1:7003");
  CHECK(out.config->log.level == "trace");

  // The last of a repeated scalar flag wins; an empty --peers clears the file's list.
  out = run({"--config", file.path(), "--hz", "11", "--hz", "12", "--peers", ""});
  REQUIRE(out.config);
  CHECK(out.config->server.hz == 12);
  CHECK(out.config->cluster.peers.empty());
}

TEST_CASE("help, version and usage errors") {
  ParseOutcome out = run({"--help"});
  CHECK_FALSE(out.config);
  CHECK(out.exit_code == 0);
  CHECK(out.message.find("--proto-max-bulk-len") != std::string::npos);
  CHECK(out.message.find("--log-level") != std::string::npos);
  CHECK(out.message.find("--print-config") != std::string::npos);

  out = run({"--version"});
  CHECK_FALSE(out.config);
  CHECK(out.exit_code == 0);
  CHECK(out.message == "ringkv-server " RINGKV_VERSION "\n");

  out = run({"--nosuch"});
  CHECK_FALSE(out.config);
  CHECK(out.exit_code == 2);
  CHECK(out.message.find("--nosuch") != std::string::npos);

  out = run({"--port"});
  CHECK(out.exit_code == 2);
  CHECK_FALSE(out.config);
}

TEST_CASE("flag errors name the flag and the reason") {
  auto error = [](std::vector<std::string> args) {
    ParseOutcome out = run(std::move(args));
    CHECK_FALSE(out.config);
    CHECK(out.exit_code == 2);
    return out.message;
  };
  CHECK(error({"--port", "70000"}) == "--port: must be between 0 and 65535, got 70000\n");
  CHECK(error({"--tls-port=-1"}) == "--tls-port: must be between 0 and 65535, got -1\n");
  CHECK(error({"--tls-auth-clients", "maybe"}) ==
        "--tls-auth-clients: must be one of no, yes, optional, got 'maybe'\n");
  CHECK(error({"--maxclients", "abc"}) == "--maxclients: expected an integer, got 'abc'\n");
  CHECK(error({"--timeout=-1"}) == "--timeout: must be between 0 and 2147483647, got -1\n");
  CHECK(error({"--proto-max-bulk-len", "1.5mb"}) ==
        "--proto-max-bulk-len: expected a size such as 512mb, got '1.5mb'\n");
  CHECK(error({"--replicas", "10001"}) == "--replicas: must be between 1 and 10000, got 10001\n");
  CHECK(error({"--hash", "md5"}) == "--hash: must be one of crc32, balanced, got 'md5'\n");
  CHECK(error({"--log-level", "loud"}) ==
        "--loglevel: must be one of trace, debug, info, warn, error, got 'loud'\n");
  CHECK(error({"--bind", "localhost"}) ==
        "--bind: must be an IPv4 or IPv6 address, got 'localhost'\n");
  CHECK(error({"--peers", "a:1,b"}) ==
        "--peers: must be \"host:port\" with a port between 1 and 65535, got 'b'\n");
  CHECK(error({"--peers", "a:1=0"}) == "--peers: weight: must be between 1 and 1000, got 0\n");
  CHECK(error({"--peers", "a:1", "--peers", "a:1"}) == "--peers: lists a:1 twice\n");
  CHECK(error({"--self", "host"}) ==
        "--self: must be \"host:port\" with a port between 1 and 65535, got 'host'\n");
  CHECK(error({"--unixsocketperm", "800"}) ==
        "--unixsocketperm: expected octal permission bits such as 700, got '800'\n");
  CHECK(error({"--unixsocketperm", "1777"}) ==
        "--unixsocketperm: expected at most 777, got '1777'\n");
}

TEST_CASE("unixsocketperm is read in octal, from flags and files, and printed so") {
  ParseOutcome out = run({"--unixsocket", "/tmp/n.sock", "--unixsocketperm", "750"});
  REQUIRE(out.config);
  CHECK(out.config->server.unixsocket == "/tmp/n.sock");
  CHECK(out.config->server.unixsocketperm == 0750);
  CHECK(get(*out.config, "unixsocketperm") == "750");
  TempFile file("[server]\nunixsocketperm = 700\n");
  out = run({"--config", file.path()});
  REQUIRE(out.config);
  CHECK(out.config->server.unixsocketperm == 0700);
  TempFile quoted("[server]\nunixsocketperm = \"0770\"\n");
  out = run({"--config", quoted.path()});
  REQUIRE(out.config);
  CHECK(out.config->server.unixsocketperm == 0770);
}

TEST_CASE("file errors name the file, the key and the reason") {
  CHECK(load_error("[server]\nport = 70000\n") ==
        "t.toml: server.port: must be between 0 and 65535, got 70000");
  CHECK(load_error("[tls]\ntls-cluster = 3\n") ==
        "t.toml: tls.tls-cluster: expected a boolean, got an integer");
  CHECK(load_error("[server]\nport = \"7379\"\n") ==
        "t.toml: server.port: expected an integer, got a string");
  CHECK(load_error("[server]\nmaxclients = 0\n") ==
        "t.toml: server.maxclients: must be between 1 and 4294967295, got 0");
  CHECK(load_error("[server]\ntimeout = -5\n") ==
        "t.toml: server.timeout: must be between 0 and 2147483647, got -5");
  CHECK(load_error("[server]\nhz = 1.5\n") ==
        "t.toml: server.hz: expected an integer, got a float");
  CHECK(load_error("[server]\nproto-max-bulk-len = \"12 mb\"\n") ==
        "t.toml: server.proto-max-bulk-len: expected a size such as 512mb, got '12 mb'");
  CHECK(load_error("[server]\nproto-max-bulk-len = 100\n") ==
        "t.toml: server.proto-max-bulk-len: must be between 1048576 and 9223372036854775807, "
        "got 100");
  CHECK(load_error("[server]\nproto-max-bulk-len = \"1k\"\n") ==
        "t.toml: server.proto-max-bulk-len: must be between 1048576 and 9223372036854775807, "
        "got '1k'");
  CHECK(load_error("[server]\nproto-max-bulk-len = true\n") ==
        "t.toml: server.proto-max-bulk-len: expected a size (an integer or a string), got a "
        "boolean");
  CHECK(load_error("[server]\nbind = 127\n") ==
        "t.toml: server.bind: expected a string, got an integer");
  CHECK(load_error("[server]\nnosuch = 1\n") == "t.toml: server.nosuch: unknown key");
  CHECK(load_error("[nosuch]\nport = 1\n") == "t.toml: nosuch: unknown section");
  CHECK(load_error("server = 1\n") == "t.toml: server: expected a table ([server])");
  CHECK(load_error("[cluster]\nreplicas = 0\n") ==
        "t.toml: cluster.replicas: must be between 1 and 10000, got 0");
  CHECK(load_error("[cluster]\nhash = \"sha1\"\n") ==
        "t.toml: cluster.hash: must be one of crc32, balanced, got 'sha1'");
  CHECK(load_error("[cluster]\npeers = \"a:1\"\n") ==
        "t.toml: cluster.peers: expected an array, got a string");
  CHECK(load_error("[cluster]\npeers = [\"a:1\", \"b:0\"]\n") ==
        "t.toml: cluster.peers[1]: must be \"host:port\" with a port between 1 and 65535, got "
        "'b:0'");
  CHECK(load_error("[cluster]\npeers = [{ addr = \"a:1\", weight = 0 }]\n") ==
        "t.toml: cluster.peers[0].weight: must be between 1 and 1000, got 0");
  CHECK(load_error("[cluster]\npeers = [{ weight = 2 }]\n") ==
        "t.toml: cluster.peers[0].addr: missing");
  CHECK(load_error("[cluster]\npeers = [{ addr = \"a:1\", colour = 2 }]\n") ==
        "t.toml: cluster.peers[0].colour: unknown key");
  CHECK(load_error("[cluster]\npeers = [7]\n") ==
        "t.toml: cluster.peers[0]: expected a string or a table, got an integer");
  CHECK(load_error("[cluster]\npeers = [\"a:1\", { addr = \"a:1\" }]\n") ==
        "t.toml: cluster.peers: lists a:1 twice");
  CHECK(load_error("[cluster]\npool-size = 0\n") ==
        "t.toml: cluster.pool-size: must be between 1 and 64, got 0");
  CHECK(load_error("[cluster]\nconnect-timeout = 0\n") ==
        "t.toml: cluster.connect-timeout: must be between 1 and 3600000, got 0");
  CHECK(load_error("[log]\nlevel = \"loud\"\n") ==
        "t.toml: log.level: must be one of trace, debug, info, warn, error, got 'loud'");
  CHECK(load_error("[server]\nport = \n") ==
        "t.toml: line 2, column 8: Error while parsing key-value pair: expected value, saw "
        "'\\n'");
}

TEST_CASE("a rejected file leaves the config unchanged") {
  Config c;
  CHECK_FALSE(load_string("[server]\nport = 7001\nhz = -1\n", "t.toml", c).empty());
  CHECK(c.server.port == 7379);
}

TEST_CASE("missing file and bad files on the command line exit with 2") {
  ParseOutcome out = run({"--config", "/nonexistent/ringkv.toml"});
  CHECK_FALSE(out.config);
  CHECK(out.exit_code == 2);
  CHECK(out.message == "/nonexistent/ringkv.toml: cannot read file: No such file or directory\n");

  TempFile bad("[server]\nport = 70000\n");
  out = run({"--config", bad.path()});
  CHECK(out.exit_code == 2);
  CHECK(out.message == bad.path() + ": server.port: must be between 0 and 65535, got 70000\n");

  Config c;
  CHECK(load_file("/tmp", c) == "/tmp: cannot read file: Is a directory");
}

TEST_CASE("--print-config prints TOML that loads back to the same config") {
  TempFile file(kEveryKey);
  ParseOutcome printed = run({"--config", file.path(), "--print-config"});
  CHECK_FALSE(printed.config);
  CHECK(printed.exit_code == 0);
  CHECK(printed.message.find("proto-max-bulk-len = 2097152\n") != std::string::npos);
  CHECK(printed.message.find(
            "peers = [{ addr = \"10.0.0.2:7002\", weight = 1 }, { addr = \"10.0.0.3:7003\", "
            "weight = 2 }]\n") != std::string::npos);

  ParseOutcome original = run({"--config", file.path()});
  REQUIRE(original.config);
  TempFile reprinted(printed.message);
  ParseOutcome reloaded = run({"--config", reprinted.path()});
  REQUIRE(reloaded.config);
  CHECK(to_toml(*reloaded.config) == printed.message);
  CHECK(reloaded.config->server.proto_max_bulk_len == original.config->server.proto_max_bulk_len);
  CHECK(reloaded.config->cluster.peers == original.config->cluster.peers);
  CHECK(reloaded.config->log.file == original.config->log.file);

  // Defaults, unweighted peers and strings that need escaping survive the trip too.
  Config c;
  fill_derived(c);
  c.cluster.peers = {{"a:1", 1}, {"b:2", 1}};
  c.log.file = "dir with \"quotes\"\\and\ttabs.log";
  std::string text = to_toml(c);
  CHECK(text.find("peers = [\"a:1\", \"b:2\"]\n") != std::string::npos);
  Config back;
  REQUIRE(load_string(text, "printed", back) == "");
  CHECK(back.log.file == c.log.file);
  CHECK(back.cluster.peers == c.cluster.peers);
  CHECK(back.cluster.self == c.cluster.self);
  CHECK(to_toml(back) == text);
}

TEST_CASE("CONFIG GET values are formatted as Redis prints them") {
  Config c;
  CHECK(get(c, "bind") == "127.0.0.1");
  CHECK(get(c, "port") == "7379");
  CHECK(get(c, "maxclients") == "10000");
  CHECK(get(c, "timeout") == "0");
  CHECK(get(c, "proto-max-bulk-len") == "536870912");
  CHECK(get(c, "hz") == "10");
  CHECK(get(c, "loglevel") == "notice");  // Redis's name for ringkv's info
  CHECK(get(c, "unixsocketperm") == "0");
  CHECK(get(c, "logfile") == "");
  CHECK(get(c, "appendonly") == "no");
  CHECK(get(c, "appendfsync") == "everysec");
  CHECK(get(c, "auto-aof-rewrite-min-size") == "67108864");
  CHECK(get(c, "save") == "");
  CHECK(get(c, "PROTO-MAX-BULK-LEN") == "536870912");
  CHECK(find_parameter("replicas") == nullptr);
  CHECK(get(c, "latency-tracking-info-percentiles") == "50 99 99.9");
  CHECK(set_parameter(c, "latency-tracking-info-percentiles", "99.99 50").empty());
  CHECK(get(c, "latency-tracking-info-percentiles") == "99.99 50");
  CHECK(set_parameter(c, "latency-tracking-info-percentiles", "101") ==
        "ERR CONFIG SET failed (possibly related to argument "
        "'latency-tracking-info-percentiles') - latency-tracking-info-percentiles parameters "
        "should sit between [0.0,100.0]");
  CHECK(get(c, "notify-keyspace-events") == "");
  CHECK(set_parameter(c, "notify-keyspace-events", "KEA").empty());
  CHECK(get(c, "notify-keyspace-events") == "AKE");
  CHECK(set_parameter(c, "notify-keyspace-events", "KEy") ==
        "ERR CONFIG SET failed (possibly related to argument 'notify-keyspace-events') - Invalid "
        "event class character. Use 'Ag$lshzxeKEtmdn'.");
  CHECK(get(c, "notify-keyspace-events") == "AKE");
  CHECK(set_parameter(c, "enable-debug-command", "yes") ==
        "ERR CONFIG SET failed (possibly related to argument 'enable-debug-command') - can't set "
        "immutable config");

  std::vector<std::string_view> names;
  for (const Parameter& p : parameters()) names.push_back(p.name);
  CHECK(names == std::vector<std::string_view>{"bind",
                                               "port",
                                               "tls-port",
                                               "maxclients",
                                               "timeout",
                                               "tcp-keepalive",
                                               "tcp-backlog",
                                               "tracking-table-max-keys",
                                               "shutdown-timeout",
                                               "shutdown-on-sigterm",
                                               "shutdown-on-sigint",
                                               "pidfile",
                                               "unixsocket",
                                               "unixsocketperm",
                                               "proto-max-bulk-len",
                                               "databases",
                                               "hz",
                                               "busy-reply-threshold",
                                               "lua-time-limit",
                                               "client-query-buffer-limit",
                                               "client-output-buffer-limit",
                                               "notify-keyspace-events",
                                               "maxmemory",
                                               "maxmemory-policy",
                                               "maxmemory-samples",
                                               "lfu-log-factor",
                                               "lfu-decay-time",
                                               "hash-max-listpack-entries",
                                               "hash-max-ziplist-entries",
                                               "hash-max-listpack-value",
                                               "hash-max-ziplist-value",
                                               "zset-max-listpack-entries",
                                               "zset-max-ziplist-entries",
                                               "zset-max-listpack-value",
                                               "zset-max-ziplist-value",
                                               "list-max-listpack-size",
                                               "list-max-ziplist-size",
                                               "list-compress-depth",
                                               "set-max-intset-entries",
                                               "hll-sparse-max-bytes",
                                               "lazyfree-lazy-user-del",
                                               "lazyfree-lazy-user-flush",
                                               "lazyfree-lazy-server-del",
                                               "lazyfree-lazy-expire",
                                               "lazyfree-lazy-eviction",
                                               "stream-node-max-bytes",
                                               "stream-node-max-entries",
                                               "repl-backlog-size",
                                               "min-replicas-to-write",
                                               "min-slaves-to-write",
                                               "min-replicas-max-lag",
                                               "min-slaves-max-lag",
                                               "appendonly",
                                               "appendfsync",
                                               "dir",
                                               "appendfilename",
                                               "auto-aof-rewrite-percentage",
                                               "auto-aof-rewrite-min-size",
                                               "aof-load-truncated",
                                               "aof-use-rdb-preamble",
                                               "save",
                                               "stop-writes-on-bgsave-error",
                                               "dbfilename",
                                               "rdbcompression",
                                               "rdbchecksum",
                                               "requirepass",
                                               "aclfile",
                                               "acllog-max-len",
                                               "acl-pubsub-default",
                                               "protected-mode",
                                               "enable-debug-command",
                                               "loglevel",
                                               "logfile",
                                               "slowlog-log-slower-than",
                                               "slowlog-max-len",
                                               "latency-monitor-threshold",
                                               "latency-tracking",
                                               "latency-tracking-info-percentiles",

                                               "tls-cert-file",
                                               "tls-key-file",
                                               "tls-key-file-pass",
                                               "tls-ca-cert-file",
                                               "tls-ca-cert-dir",
                                               "tls-auth-clients",
                                               "tls-protocols",
                                               "tls-ciphers",
                                               "tls-ciphersuites",
                                               "tls-prefer-server-ciphers",
                                               "tls-session-caching",
                                               "tls-cluster"});
  CHECK(get(c, "requirepass") == "");
  CHECK(get(c, "protected-mode") == "yes");
  CHECK(find_parameter("hz")->runtime);
  CHECK_FALSE(find_parameter("port")->runtime);
}

TEST_CASE("CONFIG SET validates with Redis's error texts") {
  Config c;
  const std::string failed = "ERR CONFIG SET failed (possibly related to argument ";
  CHECK(set_parameter(c, "maxclients", "abc") ==
        failed + "'maxclients') - argument couldn't be parsed into an integer");
  CHECK(set_parameter(c, "maxclients", "0") ==
        failed + "'maxclients') - argument must be between 1 and 4294967295 inclusive");
  CHECK(set_parameter(c, "port", "70000") ==
        failed + "'port') - argument must be between 0 and 65535 inclusive");
  CHECK(set_parameter(c, "port", "7000") == failed + "'port') - can't set immutable config");
  CHECK(set_parameter(c, "bind", "0.0.0.0") == failed + "'bind') - can't set immutable config");
  CHECK(set_parameter(c, "logfile", "x") == failed + "'logfile') - can't set immutable config");
  CHECK(set_parameter(c, "nosuch", "1") ==
        "ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'");
  CHECK(set_parameter(c, "replicas", "1") ==
        "ERR Unknown option or number of arguments for CONFIG SET - 'replicas'");
  CHECK(set_parameter(c, "timeout", "-1") ==
        failed + "'timeout') - argument must be between 0 and 2147483647 inclusive");
  // A refused value names the parameter canonically, a refused name as the client spelled it.
  CHECK(set_parameter(c, "TIMEOUT", "00") ==
        failed + "'timeout') - argument couldn't be parsed into an integer");
  CHECK(set_parameter(c, "LOGFILE", "x") == failed + "'LOGFILE') - can't set immutable config");
  CHECK(set_parameter(c, "NOSUCH", "1") ==
        "ERR Unknown option or number of arguments for CONFIG SET - 'NOSUCH'");
  CHECK(set_parameter(c, "hz", "-1") ==
        failed + "'hz') - argument must be between 0 and 2147483647 inclusive");
  CHECK(set_parameter(c, "proto-max-bulk-len", "1.5mb") ==
        failed + "'proto-max-bulk-len') - argument must be a memory value");
  CHECK(set_parameter(c, "proto-max-bulk-len", "1024k") ==
        failed +
            "'proto-max-bulk-len') - argument must be between 1048576 and 9223372036854775807 "
            "inclusive");
  CHECK(set_parameter(c, "proto-max-bulk-len", "99999999999999999999") ==
        failed +
            "'proto-max-bulk-len') - argument must be between 1048576 and 9223372036854775807 "
            "inclusive");
  CHECK(set_parameter(c, "loglevel", "foo") ==
        failed +
            "'loglevel') - argument(s) must be one of the following: debug, verbose, notice, "
            "warning");
  CHECK(get(c, "maxclients") == "10000");

  CHECK(set_parameter(c, "maxclients", "50") == "");
  CHECK(get(c, "maxclients") == "50");
  CHECK(set_parameter(c, "proto-max-bulk-len", "2gb") == "");
  CHECK(get(c, "proto-max-bulk-len") == "2147483648");
  CHECK(set_parameter(c, "hz", "1000") == "");
  CHECK(get(c, "hz") == "500");
  CHECK(set_parameter(c, "hz", "0") == "");
  CHECK(get(c, "hz") == "1");
  CHECK(set_parameter(c, "Timeout", "10") == "");
  CHECK(c.server.timeout == 10);
  CHECK(set_parameter(c, "loglevel", "NOTICE") == "");
  CHECK(c.log.level == "info");
  CHECK(get(c, "loglevel") == "notice");
  CHECK(set_parameter(c, "loglevel", "warning") == "");
  CHECK(c.log.level == "warn");
  // Redis's debug is its most verbose level: ringkv's trace. ringkv's own names are taken too.
  CHECK(set_parameter(c, "loglevel", "debug") == "");
  CHECK(c.log.level == "trace");
  CHECK(get(c, "loglevel") == "debug");
  CHECK(set_parameter(c, "loglevel", "verbose") == "");
  CHECK(c.log.level == "debug");
  CHECK(get(c, "loglevel") == "verbose");
  CHECK(set_parameter(c, "loglevel", "Error") == "");
  CHECK(c.log.level == "error");
  CHECK(get(c, "loglevel") == "warning");
  CHECK(set_parameter(c, "loglevel", "info") == "");
  CHECK(get(c, "loglevel") == "notice");
}

TEST_CASE("a parameter Redis also names by an alias answers to both names") {
  Config c;
  const std::string failed = "ERR CONFIG SET failed (possibly related to argument ";
  CHECK(get(c, "lua-time-limit") == "5000");
  CHECK(set_parameter(c, "LUA-TIME-LIMIT", "100") == "");
  CHECK(c.server.busy_reply_threshold == 100);
  CHECK(get(c, "busy-reply-threshold") == "100");
  CHECK(set_parameter(c, "Lua-Time-Limit", "-1") ==
        failed +
            "'lua-time-limit') - argument must be between 0 and 9223372036854775807 inclusive");
  using Pairs = std::vector<std::pair<std::string_view, std::string_view>>;
  // Two parameters to Redis: both may be set at once, the later winning.
  CHECK(set_parameters(c, Pairs{{"lua-time-limit", "7"}, {"busy-reply-threshold", "8"}}) == "");
  CHECK(c.server.busy_reply_threshold == 8);
  CHECK(set_parameters(c, Pairs{{"lua-time-limit", "7"}, {"LUA-time-limit", "8"}}) ==
        failed + "'LUA-time-limit') - duplicate parameter");
}

TEST_CASE("CONFIG SET with several pairs is all or nothing") {
  Config c;
  using Pairs = std::vector<std::pair<std::string_view, std::string_view>>;
  Pairs ok = {{"hz", "20"}, {"timeout", "5"}};
  CHECK(set_parameters(c, ok) == "");
  CHECK(c.server.hz == 20);
  CHECK(c.server.timeout == 5);

  Pairs bad = {{"hz", "30"}, {"timeout", "abc"}};
  CHECK(set_parameters(c, bad) ==
        "ERR CONFIG SET failed (possibly related to argument 'timeout') - argument couldn't be "
        "parsed into an integer");
  CHECK(c.server.hz == 20);

  Pairs unknown = {{"hz", "abc"}, {"nosuch", "1"}};
  CHECK(set_parameters(c, unknown) ==
        "ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'");
  Pairs twice = {{"hz", "5"}, {"HZ", "6"}};
  CHECK(set_parameters(c, twice) ==
        "ERR CONFIG SET failed (possibly related to argument 'HZ') - duplicate parameter");
  Pairs immutable = {{"hz", "7"}, {"Port", "7000"}};
  CHECK(set_parameters(c, immutable) ==
        "ERR CONFIG SET failed (possibly related to argument 'port') - can't set immutable "
        "config");
  // logfile is refused before any value is looked at, as in Redis.
  Pairs logfile_last = {{"hz", "abc"}, {"logfile", "x"}};
  CHECK(set_parameters(c, logfile_last) ==
        "ERR CONFIG SET failed (possibly related to argument 'logfile') - can't set immutable "
        "config");
  CHECK(c.server.hz == 20);
}

TEST_CASE("the shipped example files load") {
  // __FILE__ is this file's absolute path under CMake; the conf/ folder is two levels up.
  std::string root(__FILE__);
  root.erase(root.rfind("tests/unit/"));

  Config example;
  REQUIRE(load_file(root + "conf/ringkv.toml", example) == "");
  Config defaults;
  CHECK(to_toml(example) == to_toml(defaults));

  for (int n = 1; n <= 3; ++n) {
    ParseOutcome out = run({"--config", root + "conf/node" + std::to_string(n) + ".toml"});
    REQUIRE(out.config);
    const Config& c = *out.config;
    CHECK(c.server.port == 7000 + n);
    CHECK(c.cluster.self == "127.0.0.1:" + std::to_string(7000 + n));
    REQUIRE(c.cluster.peers.size() == 2);
    for (const PeerOptions& peer : c.cluster.peers) {
      CHECK(peer.addr != c.cluster.self);
      CHECK(peer.addr.starts_with("127.0.0.1:700"));
      CHECK(peer.weight == 1);
    }
  }
}

TEST_CASE("security: requirepass and protected-mode at run time, rename-command from the file") {
  Config c;
  CHECK(set_parameter(c, "requirepass", "pw 1").empty());
  CHECK(c.security.requirepass == "pw 1");
  CHECK(set_parameter(c, "protected-mode", "no").empty());
  CHECK_FALSE(c.security.protected_mode);
  CHECK(set_parameter(c, "protected-mode", "maybe") ==
        "ERR CONFIG SET failed (possibly related to argument 'protected-mode') - argument must "
        "be 'yes' or 'no'");

  Config f;
  CHECK(load_string("[security]\nrename-command = { FLUSHALL = \"\", CONFIG = \"CFG_x1\" }\n"
                    "[cluster]\nsecret = \"s\"\n",
                    "t.toml", f)
            .empty());
  CHECK(f.cluster.secret == "s");
  // toml++ keeps a table's keys sorted.
  CHECK(f.security.rename_command ==
        std::vector<std::pair<std::string, std::string>>{{"CONFIG", "CFG_x1"}, {"FLUSHALL", ""}});
  CHECK(to_toml(f).find("rename-command = { \"CONFIG\" = \"CFG_x1\", \"FLUSHALL\" = \"\" }") !=
        std::string::npos);
  Config back;
  CHECK(load_string(to_toml(f), "printed.toml", back).empty());
  CHECK(back.security.rename_command == f.security.rename_command);

  Config bad;
  CHECK(load_string("[security]\nrename-command = { GET = 1 }\n", "b.toml", bad) ==
        "b.toml: security.rename-command.GET: expected a string, got an integer");
  CHECK(load_string("[security]\nrename-command = [\"GET\"]\n", "b.toml", bad) ==
        "b.toml: security.rename-command: expected a table such as { FLUSHALL = \"\" }, got an "
        "array");
  CHECK(load_string("[security]\nrename-command = { GET = \"a b\" }\n", "b.toml", bad) ==
        "b.toml: security.rename-command.GET: a command name cannot contain spaces, got 'a b'");
  CHECK_FALSE(run({"--rename-command", "GET"}).config.has_value());
  ParseOutcome flags =
      run({"--requirepass", "x", "--protected-mode", "no", "--cluster-secret", "s"});
  REQUIRE(flags.config.has_value());
  CHECK(flags.config->security.requirepass == "x");
  CHECK_FALSE(flags.config->security.protected_mode);
  CHECK(flags.config->cluster.secret == "s");
}
