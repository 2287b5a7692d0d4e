// The parameter table and the typed row factories behind it (integer, size, enum, string,
// peer list). Each factory gives a row its TOML, command-line and CONFIG SET parsers and its
// printers, so the rules for one kind of value live in exactly one place.
#include "conf/params.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>

#include "common/keyspace_events.h"
#include "common/numbers.h"
#include "conf/param_rows.h"

namespace ringkv::conf::detail {
namespace {

Reason check_ip(std::string_view text) {
  std::string s(text);
  unsigned char buf[sizeof(in6_addr)];
  if (inet_pton(AF_INET, s.c_str(), buf) == 1 || inet_pton(AF_INET6, s.c_str(), buf) == 1) {
    return {};
  }
  return "must be an IPv4 or IPv6 address, got " + quote_text(text);
}

Reason check_not_empty(std::string_view text) {
  return text.empty() ? Reason{"must not be empty"} : Reason{};
}

// CONFIG GET answers the directory as an absolute path, as Redis (which moves into it) does:
// tools find the RDB file by it. The TOML form keeps the configured text.
Row absolute_in_config_get(Row row) {
  row.to_text = [text = row.to_text](const Config& c) {
    std::string dir = text(c);
    char* real = ::realpath(dir.c_str(), nullptr);
    if (real == nullptr) return dir;
    dir = real;
    std::free(real);
    return dir;
  };
  return row;
}

// CONFIG speaks Redis's log levels, as redis-server does: debug (ringkv's trace), verbose
// (debug), notice (info) and warning (warn, and error, which Redis has not). CONFIG SET takes
// ringkv's own names where they are not Redis's (trace, info, warn, error) as well.
Row redis_log_levels(Row row) {
  static constexpr std::pair<std::string_view, std::string_view> kLevels[] = {
      {"debug", "trace"}, {"verbose", "debug"}, {"notice", "info"}, {"warning", "warn"}};
  row.to_text = [](const Config& c) -> std::string {
    for (const auto& [redis, ours] : kLevels) {
      if (c.log.level == ours) return std::string(redis);
    }
    return "warning";
  };
  row.from_redis = [](Config& c, std::string_view text) -> Reason {
    const std::string wanted = lower(text);
    for (const auto& [redis, ours] : kLevels) {
      if (wanted == redis) {
        c.log.level = ours;
        return {};
      }
    }
    for (std::string_view ours : {"trace", "info", "warn", "error"}) {
      if (wanted == ours) {
        c.log.level = ours;
        return {};
      }
    }
    return "argument(s) must be one of the following: debug, verbose, notice, warning";
  };
  return row;
}

// unixsocketperm: permission bits written in octal, as redis.conf writes them (700 is rwx------),
// in TOML as an integer or a string of octal digits.
Row octal_mode_row(const Head& h, Field<ServerOptions, int64_t> field) {
  Row row = make_row(h);
  auto parse = [=](Config& c, std::string_view text) -> Reason {
    int64_t mode = 0;
    for (char d : text) {
      if (d < '0' || d > '7')
        return "expected octal permission bits such as 700, got " + quote_text(text);
      mode = mode * 8 + (d - '0');
      if (mode > 0777) return "expected at most 777, got " + quote_text(text);
    }
    if (text.empty()) return "expected octal permission bits such as 700, got ''";
    field(c) = mode;
    return {};
  };
  row.from_text = parse;
  row.from_redis = parse;
  row.from_toml = [=](Config& c, const toml::node& node) -> Reason {
    if (node.is_integer()) return parse(c, std::to_string(node.as_integer()->get()));
    if (node.is_string()) return parse(c, node.as_string()->get());
    return "expected an integer such as 700, got " + type_name(node);
  };
  row.to_text = [=](const Config& c) {
    char digits[8];
    std::snprintf(digits, sizeof(digits), "%o", static_cast<unsigned>(field(c)));
    return std::string(digits);
  };
  row.to_toml = row.to_text;
  return row;
}

// A plain file name: the file lives in dir.
Reason check_file_name(std::string_view text) {
  if (text.empty() || text.find('/') != std::string_view::npos || text == "." || text == "..") {
    return "must be a file name without a directory, got " + quote_text(text);
  }
  return {};
}

// The `save` rules: pairs of seconds and changes, Redis's reason from CONFIG SET.
template <typename G>
Row save_row(const Head& h, Field<G, std::string> field) {
  Row row = string_row(h, field, [](std::string_view text) -> Reason {
    std::vector<std::pair<int64_t, int64_t>> rules;
    if (parse_save_rules(text, rules)) return {};
    return "expected pairs of seconds and changes such as \"3600 1 300 100\", got " +
           quote_text(text);
  });
  row.from_redis = [=](Config& c, std::string_view text) -> Reason {
    std::vector<std::pair<int64_t, int64_t>> rules;
    if (!parse_save_rules(text, rules)) return "Invalid save parameters";
    field(c) = std::string(text);
    return {};
  };
  return row;
}

// client-output-buffer-limit: "<class> <hard> <soft> <soft-seconds>" repeated, classes normal,
// replica (or slave) and pubsub; classes not named keep their limits. The whole value is
// checked before any class changes, and the reasons are Redis's.
Reason set_output_limits(ServerOptions& server, std::string_view text) {
  std::vector<std::string_view> words;
  while (!trim(text).empty()) {
    text = trim(text);
    size_t end = text.find_first_of(" \t");
    words.push_back(text.substr(0, end));
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end);
  }
  if (words.size() % 4 != 0) return "Wrong number of arguments in buffer limit configuration.";
  ServerOptions next = server;
  for (size_t i = 0; i < words.size(); i += 4) {
    const std::string name = lower(words[i]);
    OutputBufferLimit* limit = nullptr;
    if (name == "normal") {
      limit = &next.output_limit_normal;
    } else if (name == "slave" || name == "replica") {
      limit = &next.output_limit_replica;
    } else if (name == "pubsub") {
      limit = &next.output_limit_pubsub;
    } else {
      return "Invalid client class specified in buffer limit configuration.";
    }
    auto hard = common::parse_memory(words[i + 1]);
    auto soft = common::parse_memory(words[i + 2]);
    auto seconds = common::parse_integer(words[i + 3]);
    if (!hard || !soft || !seconds || *seconds < 0 || *hard > static_cast<uint64_t>(kInt64Max) ||
        *soft > static_cast<uint64_t>(kInt64Max)) {
      return "Error in hard, soft or soft_seconds setting in buffer limit configuration.";
    }
    *limit = OutputBufferLimit{static_cast<int64_t>(*hard), static_cast<int64_t>(*soft), *seconds};
  }
  server = std::move(next);
  return {};
}

// The client-output-buffer-limit row, printed as Redis's CONFIG GET prints it.
Row output_limit_row(const Head& h) {
  Row row = make_row(h);
  row.from_text = [](Config& c, std::string_view text) {
    return set_output_limits(c.server, text);
  };
  row.from_redis = row.from_text;
  row.from_toml = [](Config& c, const toml::node& node) -> Reason {
    if (!node.is_string()) return "expected a string, got " + type_name(node);
    return set_output_limits(c.server, node.as_string()->get());
  };
  row.to_text = [](const Config& c) {
    auto format = [](std::string_view name, const OutputBufferLimit& l) {
      return std::string(name) + " " + std::to_string(l.hard) + " " + std::to_string(l.soft) + " " +
             std::to_string(l.soft_seconds);
    };
    return format("normal", c.server.output_limit_normal) + " " +
           format("slave", c.server.output_limit_replica) + " " +
           format("pubsub", c.server.output_limit_pubsub);
  };
  row.to_toml = [to_text = row.to_text](const Config& c) { return toml_quote(to_text(c)); };
  return row;
}

// notify-keyspace-events: the classes of keyspace events published, stored as Redis's bits and
// printed in Redis's canonical order ("KEA" reads back as "AKE").
Row keyspace_events_row(const Head& h) {
  Row row = make_row(h);
  row.from_redis = [](Config& c, std::string_view text) -> Reason {
    const std::optional<int> flags = common::parse_keyspace_events(text);
    if (!flags) return "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.";
    c.server.notify_keyspace_events = *flags;
    return {};
  };
  row.from_text = row.from_redis;
  row.from_toml = [from_text = row.from_text](Config& c, const toml::node& node) -> Reason {
    if (!node.is_string()) return "expected a string, got " + type_name(node);
    return from_text(c, node.as_string()->get());
  };
  row.to_text = [](const Config& c) {
    return common::format_keyspace_events(c.server.notify_keyspace_events);
  };
  row.to_toml = [to_text = row.to_text](const Config& c) { return toml_quote(to_text(c)); };
  return row;
}

// rename-command, file-only as in Redis: a TOML table mapping command names to their new names,
// "" disabling the command: rename-command = { FLUSHALL = "", CONFIG = "CFG_x1" }. Whether the
// names are commands is checked where the command table is known (the server refuses to start).
Row rename_row(const Head& h) {
  Row row = make_row(h);
  row.from_toml = [](Config& c, const toml::node& node) -> Reason {
    const toml::table* table = node.as_table();
    if (table == nullptr)
      return "expected a table such as { FLUSHALL = \"\" }, got " + type_name(node);
    std::vector<std::pair<std::string, std::string>> renames;
    for (const auto& [key, value] : *table) {
      std::string from(key.str());
      if (from.empty()) return "a command name cannot be empty";
      if (!value.is_string()) return "." + from + ": expected a string, got " + type_name(value);
      std::string to = value.as_string()->get();
      if (to.find_first_of(" \t\r\n") != std::string::npos) {
        return "." + from + ": a command name cannot contain spaces, got " + quote_text(to);
      }
      renames.emplace_back(std::move(from), std::move(to));
    }
    c.security.rename_command = std::move(renames);
    return {};
  };
  row.from_text = [](Config&, std::string_view) -> Reason {
    return "can only be set in the configuration file";
  };
  row.to_toml = [](const Config& c) {
    std::string out = "{";
    for (const auto& [from, to] : c.security.rename_command) {
      out += (out.size() > 1 ? ", " : " ") + toml_quote(from) + " = " + toml_quote(to);
    }
    return out + (out.size() > 1 ? " }" : "}");
  };
  row.to_text = row.to_toml;
  return row;
}

// shutdown-on-sigterm/-sigint: "default", or SHUTDOWN's flags among save/nosave, now and force
// in any order; kept (and shown) in Redis's order, "default" when none is given.
Row shutdown_flags_row(const Head& h, Field<ServerOptions, std::string> field) {
  Row row = make_row(h);
  static constexpr std::string_view kNames[] = {"default", "save", "nosave", "now", "force"};
  auto parse = [](std::string_view text, std::string& out) -> Reason {
    bool seen[std::size(kNames)] = {};
    if (trim(text).empty()) {
      return "argument(s) must be one of the following: default, save, nosave, now, force";
    }
    while (!trim(text).empty()) {
      text = trim(text);
      const size_t space = text.find(' ');
      const std::string w = lower(text.substr(0, space));
      text = space == std::string_view::npos ? std::string_view() : text.substr(space);
      const auto* it = std::find(std::begin(kNames), std::end(kNames), w);
      if (it == std::end(kNames)) {
        return "argument(s) must be one of the following: default, save, nosave, now, force";
      }
      seen[it - std::begin(kNames)] = true;
    }
    if (seen[1] && seen[2]) return "shutdown options SAVE and NOSAVE can't be used simultaneously";
    out.clear();
    for (size_t i = 1; i < std::size(kNames); ++i) {
      if (seen[i]) out += (out.empty() ? "" : " ") + std::string(kNames[i]);
    }
    if (out.empty()) out = "default";
    return {};
  };
  row.from_redis = [=](Config& c, std::string_view text) -> Reason {
    std::string value;
    if (Reason why = parse(text, value); !why.empty()) return why;
    field(c) = value;
    return {};
  };
  // Files and flags: the same, with the value named.
  row.from_text = [from_redis = row.from_redis](Config& c, std::string_view text) -> Reason {
    Reason why = from_redis(c, text);
    return why.empty() ? why : why + ", got " + quote_text(text);
  };
  row.from_toml = [=, from_text = row.from_text](Config& c, const toml::node& node) -> Reason {
    if (!node.is_string()) return "expected a string, got " + type_name(node);
    return from_text(c, node.as_string()->get());
  };
  row.to_text = [=](const Config& c) { return field(c); };
  row.to_toml = [=](const Config& c) { return toml_quote(field(c)); };
  return row;
}

Row protected_in_redis(Row row) {
  row.protected_in_redis = true;
  return row;
}

}  // namespace

std::string toml_quote(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out = "\"";
  for (char ch : text) {
    auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 0xf];
        } else {
          out += ch;
        }
    }
  }
  return out + "\"";
}

const std::vector<std::string_view>& sections() {
  static const std::vector<std::string_view> kSections = {
      "server", "cluster", "persistence", "security", "tls", "memory", "log"};
  return kSections;
}

const std::vector<Row>& rows() {
  using S = ServerOptions;
  using C = ClusterOptions;
  using P = PersistenceOptions;
  using L = LogOptions;
  using M = MemoryOptions;
  using Sec = SecurityOptions;
  constexpr auto kServer = &Config::server;
  constexpr auto kCluster = &Config::cluster;
  constexpr auto kSecurity = &Config::security;
  constexpr auto kPersistence = &Config::persistence;
  constexpr auto kLog = &Config::log;
  constexpr auto kMemory = &Config::memory;
  static const std::vector<Row> kRows = [] {
    std::vector<Row> base = {
        string_row(Head{"server", "bind", "--bind", "bind", false,
                        "IP address (IPv4 or IPv6) the listener binds to"},
                   Field<S, std::string>{kServer, &S::bind}, check_ip),
        int_row(Head{"server", "port", "--port", "port", false,
                     "TCP port for plain-text clients (0 = TLS only, on tls-port)"},
                Field<S, int>{kServer, &S::port}, 0, 65535),
        tls_port_row(),
        int_row(Head{"server", "maxclients", "--maxclients", "maxclients", true,
                     "Most clients connected at once; more are refused"},
                Field<S, int64_t>{kServer, &S::maxclients}, 1, kUintMax),
        int_row(Head{"server", "timeout", "--timeout", "timeout", true,
                     "Close a client idle for this many seconds (0 = never); also ends a SCRIPT "
                     "DEBUG session idle that long"},
                Field<S, int64_t>{kServer, &S::timeout}, 0, kIntMax),
        int_row(Head{"server", "tcp-keepalive", "--tcp-keepalive", "tcp-keepalive", true,
                     "Seconds a client's connection may idle before TCP keepalive probes ask "
                     "whether its host is still there (then every third of that, 3 times; 0 = "
                     "off); applies to connections accepted after a change"},
                Field<S, int64_t>{kServer, &S::tcp_keepalive}, 0, kIntMax),
        immutable_in_redis(int_row(
            Head{"server", "tcp-backlog", "--tcp-backlog", "tcp-backlog", false,
                 "Connections the listeners queue before they are accepted (the kernel caps it "
                 "at net.core.somaxconn)"},
            Field<S, int64_t>{kServer, &S::tcp_backlog}, 0, kIntMax)),
        int_row(Head{"server", "tracking-table-max-keys", "--tracking-table-max-keys",
                     "tracking-table-max-keys", true,
                     "Keys client-side caching (CLIENT TRACKING) remembers readers of; past it, "
                     "keys are invalidated for their readers as if written (0 = no limit)"},
                Field<S, int64_t>{kServer, &S::tracking_table_max_keys}, 0, kInt64Max),
        int_row(Head{"server", "shutdown-timeout", "--shutdown-timeout", "shutdown-timeout", true,
                     "Seconds a shutdown (SHUTDOWN without NOW, or a signal) waits, writes paused, "
                     "for the replicas of this node's keys to have every write (0 = no wait)"},
                Field<S, int64_t>{kServer, &S::shutdown_timeout}, 0, kIntMax),
        shutdown_flags_row(
            Head{"server", "shutdown-on-sigterm", "--shutdown-on-sigterm", "shutdown-on-sigterm",
                 true,
                 "What SIGTERM does: default (as SHUTDOWN: save when save rules are set, stay up "
                 "if that fails) or SHUTDOWN's flags: save or nosave, now, force (exit whatever "
                 "fails)"},
            Field<S, std::string>{kServer, &S::shutdown_on_sigterm}),
        shutdown_flags_row(
            Head{"server", "shutdown-on-sigint", "--shutdown-on-sigint", "shutdown-on-sigint", true,
                 "What SIGINT does (as shutdown-on-sigterm)"},
            Field<S, std::string>{kServer, &S::shutdown_on_sigint}),
        immutable_in_redis(string_row(
            Head{"server", "pidfile", "--pidfile", "pidfile", false,
                 "File the server writes its process id to once it listens, and removes when it "
                 "exits cleanly (empty = none)"},
            Field<S, std::string>{kServer, &S::pidfile}, nullptr)),
        immutable_in_redis(string_row(
            Head{"server", "unixsocket", "--unixsocket", "unixsocket", false,
                 "Path of a Unix domain socket clients may connect to as well (empty = none); a "
                 "file there is replaced, and removed when the server exits cleanly"},
            Field<S, std::string>{kServer, &S::unixsocket}, nullptr)),
        immutable_in_redis(octal_mode_row(
            Head{"server", "unixsocketperm", "--unixsocketperm", "unixsocketperm", false,
                 "Permission bits of the unixsocket file, in octal as chmod takes "
                 "them (700: its owner only; 0 = as the umask leaves them)"},
            Field<S, int64_t>{kServer, &S::unixsocketperm})),
        size_row(Head{"server", "proto-max-bulk-len", "--proto-max-bulk-len", "proto-max-bulk-len",
                      true, "Longest bulk string a client may send (bytes, or 512mb, 1gb...)"},
                 Field<S, int64_t>{kServer, &S::proto_max_bulk_len}, 1024 * 1024),
        immutable_in_redis(
            int_row(Head{"server", "databases", "--databases", "databases", false,
                         "Numbered databases clients SELECT (0 to databases-1); the same on every "
                         "cluster node"},
                    Field<S, int64_t>{kServer, &S::databases}, 1, kIntMax)),
        int_row(Head{"server", "hz", "--hz", "hz", true,
                     "Background task runs per second (accepted 0+, used within 1-500)"},
                Field<S, int64_t>{kServer, &S::hz}, 0, kIntMax, 1, 500),
        int_row(
            Head{"server", "busy-reply-threshold", "--busy-reply-threshold", "busy-reply-threshold",
                 true, "Milliseconds a script runs before other clients get -BUSY (0 = never)"},
            Field<S, int64_t>{kServer, &S::busy_reply_threshold}, 0, kInt64Max),
        int_row(Head{"server", "lua-time-limit", "--lua-time-limit", "lua-time-limit", true,
                     "Alias of busy-reply-threshold"},
                Field<S, int64_t>{kServer, &S::busy_reply_threshold}, 0, kInt64Max),
        size_row(Head{"server", "client-query-buffer-limit", "--client-query-buffer-limit",
                      "client-query-buffer-limit", true,
                      "Close a client whose unparsed input exceeds this (bytes, or 1gb...)"},
                 Field<S, int64_t>{kServer, &S::client_query_buffer_limit}, 1024 * 1024),
        output_limit_row(Head{"server", "client-output-buffer-limit",
                              "--client-output-buffer-limit", "client-output-buffer-limit", true,
                              "Per class (normal, replica, pubsub): hard, soft limit and soft "
                              "seconds of a client's unsent output"}),
        keyspace_events_row(Head{"server", "notify-keyspace-events", "--notify-keyspace-events",
                                 "notify-keyspace-events", true,
                                 "Keyspace event classes published (K E g $ l s h z x e t m d n A; "
                                 "empty = none)"}),
        size_row(
            Head{"memory", "maxmemory", "--maxmemory", "maxmemory", true,
                 "Data size at which writes evict keys or fail (bytes, or 100mb...; 0 = none)"},
            Field<M, int64_t>{kMemory, &M::maxmemory}, 0),
        enum_row(Head{"memory", "maxmemory-policy", "--maxmemory-policy", "maxmemory-policy", true,
                      "Which keys go over maxmemory: noeviction, allkeys-/volatile- lru, lfu, "
                      "random, volatile-ttl"},
                 Field<M, std::string>{kMemory, &M::maxmemory_policy},
                 {kPolicyVolatileLru, kPolicyVolatileLfu, kPolicyVolatileRandom, kPolicyVolatileTtl,
                  kPolicyAllKeysLru, kPolicyAllKeysLfu, kPolicyAllKeysRandom, kPolicyNoEviction},
                 {}),
        int_row(Head{"memory", "maxmemory-samples", "--maxmemory-samples", "maxmemory-samples",
                     true, "Keys sampled per eviction round (more = closer to exact, slower)"},
                Field<M, int64_t>{kMemory, &M::maxmemory_samples}, 1, kIntMax),
        int_row(Head{"memory", "lfu-log-factor", "--lfu-log-factor", "lfu-log-factor", true,
                     "LFU counter growth: higher needs more accesses per increment"},
                Field<M, int64_t>{kMemory, &M::lfu_log_factor}, 0, kIntMax),
        int_row(Head{"memory", "lfu-decay-time", "--lfu-decay-time", "lfu-decay-time", true,
                     "Minutes without access per LFU counter decrement (0 = never)"},
                Field<M, int64_t>{kMemory, &M::lfu_decay_time}, 0, kIntMax),
        int_row(Head{"memory", "hash-max-listpack-entries", "--hash-max-listpack-entries",
                     "hash-max-listpack-entries", true, "Most fields a hash keeps as a listpack"},
                Field<M, int64_t>{kMemory, &M::hash_max_listpack_entries}, 0, kInt64Max),
        int_row(Head{"memory", "hash-max-ziplist-entries", "--hash-max-ziplist-entries",
                     "hash-max-ziplist-entries", true, "Alias of hash-max-listpack-entries"},
                Field<M, int64_t>{kMemory, &M::hash_max_listpack_entries}, 0, kInt64Max),
        size_row(Head{"memory", "hash-max-listpack-value", "--hash-max-listpack-value",
                      "hash-max-listpack-value", true,
                      "Longest field or value (bytes) a hash keeps as a listpack"},
                 Field<M, int64_t>{kMemory, &M::hash_max_listpack_value}, 0),
        size_row(Head{"memory", "hash-max-ziplist-value", "--hash-max-ziplist-value",
                      "hash-max-ziplist-value", true, "Alias of hash-max-listpack-value"},
                 Field<M, int64_t>{kMemory, &M::hash_max_listpack_value}, 0),
        int_row(Head{"memory", "zset-max-listpack-entries", "--zset-max-listpack-entries",
                     "zset-max-listpack-entries", true,
                     "Most members a sorted set keeps as a listpack"},
                Field<M, int64_t>{kMemory, &M::zset_max_listpack_entries}, 0, kInt64Max),
        int_row(Head{"memory", "zset-max-ziplist-entries", "--zset-max-ziplist-entries",
                     "zset-max-ziplist-entries", true, "Alias of zset-max-listpack-entries"},
                Field<M, int64_t>{kMemory, &M::zset_max_listpack_entries}, 0, kInt64Max),
        size_row(Head{"memory", "zset-max-listpack-value", "--zset-max-listpack-value",
                      "zset-max-listpack-value", true,
                      "Longest member (bytes) a sorted set keeps as a listpack"},
                 Field<M, int64_t>{kMemory, &M::zset_max_listpack_value}, 0),
        size_row(Head{"memory", "zset-max-ziplist-value", "--zset-max-ziplist-value",
                      "zset-max-ziplist-value", true, "Alias of zset-max-listpack-value"},
                 Field<M, int64_t>{kMemory, &M::zset_max_listpack_value}, 0),
        int_row(Head{"memory", "list-max-listpack-size", "--list-max-listpack-size",
                     "list-max-listpack-size", true,
                     "A list node's limit: -1..-5 = 4..64 KB of listpack, positive = entries"},
                Field<M, int64_t>{kMemory, &M::list_max_listpack_size}, kIntMin, kIntMax),
        int_row(Head{"memory", "list-max-ziplist-size", "--list-max-ziplist-size",
                     "list-max-ziplist-size", true, "Alias of list-max-listpack-size"},
                Field<M, int64_t>{kMemory, &M::list_max_listpack_size}, kIntMin, kIntMax),
        int_row(Head{"memory", "list-compress-depth", "--list-compress-depth",
                     "list-compress-depth", true,
                     "List nodes at each end kept uncompressed; the rest are LZF-compressed "
                     "(0 = none)"},
                Field<M, int64_t>{kMemory, &M::list_compress_depth}, 0, kIntMax),
        int_row(Head{"memory", "set-max-intset-entries", "--set-max-intset-entries",
                     "set-max-intset-entries", true, "Most integers a set keeps as an intset"},
                Field<M, int64_t>{kMemory, &M::set_max_intset_entries}, 0, kInt64Max),
        size_row(
            Head{"memory", "hll-sparse-max-bytes", "--hll-sparse-max-bytes", "hll-sparse-max-bytes",
                 true, "Bytes past which a HyperLogLog's sparse form turns dense"},
            Field<M, int64_t>{kMemory, &M::hll_sparse_max_bytes}, 0),
        bool_row(Head{"memory", "lazyfree-lazy-user-del", "--lazyfree-lazy-user-del",
                      "lazyfree-lazy-user-del", true,
                      "DEL frees big values in the background, as UNLINK does"},
                 Field<M, bool>{kMemory, &M::lazyfree_lazy_user_del}),
        bool_row(Head{"memory", "lazyfree-lazy-user-flush", "--lazyfree-lazy-user-flush",
                      "lazyfree-lazy-user-flush", true,
                      "FLUSHALL and FLUSHDB without SYNC or ASYNC free in the background"},
                 Field<M, bool>{kMemory, &M::lazyfree_lazy_user_flush}),
        bool_row(Head{"memory", "lazyfree-lazy-server-del", "--lazyfree-lazy-server-del",
                      "lazyfree-lazy-server-del", true,
                      "A big value a write replaces (SET over a key, RENAME's destination) is "
                      "freed in the background"},
                 Field<M, bool>{kMemory, &M::lazyfree_lazy_server_del}),
        bool_row(
            Head{"memory", "lazyfree-lazy-expire", "--lazyfree-lazy-expire", "lazyfree-lazy-expire",
                 true, "Big values of keys whose TTL passed are freed in the background"},
            Field<M, bool>{kMemory, &M::lazyfree_lazy_expire}),
        bool_row(Head{"memory", "lazyfree-lazy-eviction", "--lazyfree-lazy-eviction",
                      "lazyfree-lazy-eviction", true,
                      "Big values of keys maxmemory evicts are freed in the background"},
                 Field<M, bool>{kMemory, &M::lazyfree_lazy_eviction}),
        size_row(Head{"memory", "stream-node-max-bytes", "--stream-node-max-bytes",
                      "stream-node-max-bytes", true,
                      "Bytes past which a stream starts a new node (0 = 1 GB)"},
                 Field<M, int64_t>{kMemory, &M::stream_node_max_bytes}, 0),
        int_row(Head{"memory", "stream-node-max-entries", "--stream-node-max-entries",
                     "stream-node-max-entries", true,
                     "Entries, deleted ones included, past which a stream starts a new node (0 = "
                     "no limit)"},
                Field<M, int64_t>{kMemory, &M::stream_node_max_entries}, 0, kInt64Max),
        string_row(Head{"cluster", "self", "--self", "", false,
                        "This node's host:port on the ring (empty = bind:port; set, with no peers: "
                        "may be joined)"},
                   Field<C, std::string>{kCluster, &C::self}, check_self),
        peers_row(
            Head{"cluster", "peers", "--peers", "", false,
                 "The other nodes: host:port or {addr = host:port, weight = N}; seed only (the "
                 "ring file wins)"}),
        int_row(Head{"cluster", "replicas", "--replicas", "", false,
                     "Virtual nodes per unit of weight on the hash ring"},
                Field<C, int64_t>{kCluster, &C::replicas}, 1, 10000),
        enum_row(
            Head{"cluster", "hash", "--hash", "", false, "Ring hash function: crc32 or balanced"},
            Field<C, std::string>{kCluster, &C::hash}, {kHashCrc32, kHashBalanced}, {}),
        int_row(Head{"cluster", "pool-size", "--pool-size", "", false,
                     "Connections kept open to each peer"},
                Field<C, int64_t>{kCluster, &C::pool_size}, 1, 64),
        int_row(Head{"cluster", "connect-timeout", "--connect-timeout", "", false,
                     "Give up connecting to a peer after this many milliseconds"},
                Field<C, int64_t>{kCluster, &C::connect_timeout_ms}, 1, kMaxTimeoutMs),
        int_row(Head{"cluster", "request-timeout", "--request-timeout", "", false,
                     "Fail a relayed request not answered within this many milliseconds"},
                Field<C, int64_t>{kCluster, &C::request_timeout_ms}, 1, kMaxTimeoutMs),
        int_row(Head{"cluster", "health-interval", "--health-interval", "", false,
                     "Ping every peer this often (milliseconds)"},
                Field<C, int64_t>{kCluster, &C::health_interval_ms}, 10, kMaxTimeoutMs),
        int_row(Head{"cluster", "failure-limit", "--failure-limit", "", false,
                     "Consecutive failed pings that mark a peer down"},
                Field<C, int64_t>{kCluster, &C::failure_limit}, 1, 1000),
        enum_row(Head{"cluster", "on-peer-down", "--on-peer-down", "", false,
                      "A down peer's keys: fail (error at once) or eject (next owners serve them)"},
                 Field<C, std::string>{kCluster, &C::on_peer_down}, {kPeerDownFail, kPeerDownEject},
                 {}),
        string_row(
            Head{"cluster", "secret", "--cluster-secret", "", false,
                 "Shared by all nodes; peers prove it when linking (empty = links unproven)"},
            Field<C, std::string>{kCluster, &C::secret}, nullptr),
        int_row(Head{"cluster", "replication-factor", "--replication-factor", "", false,
                     "Copies of each key: its owner, then the owners it would have without the "
                     "ones before (1 = none; from 2 on, a member a majority sees down is failed "
                     "over)"},
                Field<C, int64_t>{kCluster, &C::replication_factor}, 1, 16),
        int_row(Head{"cluster", "replica-acks", "--replica-acks", "", false,
                     "Replicas that must have a write before it is acknowledged (0 = "
                     "asynchronous); at most replication-factor - 1"},
                Field<C, int64_t>{kCluster, &C::replica_acks}, 0, 15),
        raised_to(size_row(Head{"cluster", "repl-backlog-size", "--repl-backlog-size",
                                "repl-backlog-size", true,
                                "Bytes of writes kept per replica so that a short disconnection "
                                "resumes instead of copying everything again (bytes, or 1mb...; "
                                "less than 16kb is raised to it)"},
                           Field<C, int64_t>{kCluster, &C::repl_backlog_size}, 1),
                  Field<C, int64_t>{kCluster, &C::repl_backlog_size}, 16 * 1024),
        int_row(Head{"cluster", "repl-batch-ms", "--repl-batch-ms", "", false,
                     "Writes no client waits for on a replica (replica-acks 0) go to it this "
                     "many milliseconds after the first of them, in one write: less CPU, more "
                     "writes a failover may lose (0 = at the end of each loop iteration)"},
                Field<C, int64_t>{kCluster, &C::repl_batch_ms}, 0, 100),
        int_row(Head{"cluster", "min-replicas-to-write", "--min-replicas-to-write",
                     "min-replicas-to-write", true,
                     "Refuse a write (-NOREPLICAS) while fewer of its keys' replicas than this are "
                     "online within min-replicas-max-lag (0 = never; a node without replicas "
                     "refuses every write from 1 on)"},
                Field<C, int64_t>{kCluster, &C::min_replicas_to_write}, 0, kIntMax),
        int_row(Head{"cluster", "min-slaves-to-write", "--min-slaves-to-write",
                     "min-slaves-to-write", true, "Alias of min-replicas-to-write"},
                Field<C, int64_t>{kCluster, &C::min_replicas_to_write}, 0, kIntMax),
        int_row(Head{"cluster", "min-replicas-max-lag", "--min-replicas-max-lag",
                     "min-replicas-max-lag", true,
                     "Seconds a replica may go without acknowledging the writes sent to it and "
                     "still count for min-replicas-to-write (0 = no check)"},
                Field<C, int64_t>{kCluster, &C::min_replicas_max_lag}, 0, kIntMax),
        int_row(Head{"cluster", "min-slaves-max-lag", "--min-slaves-max-lag", "min-slaves-max-lag",
                     true, "Alias of min-replicas-max-lag"},
                Field<C, int64_t>{kCluster, &C::min_replicas_max_lag}, 0, kIntMax),
        string_row(Head{"cluster", "tie-breaker", "--tie-breaker", "", false,
                        "A member (host:port) whose vote counts twice while the members are "
                        "even in number: with 2 members it may fail the other over (the same on "
                        "every member; empty = none)"},
                   Field<C, std::string>{kCluster, &C::tie_breaker}, check_self),
        bool_row(
            Head{"cluster", "atomic-multikey", "--atomic-multikey", "", false,
                 "MGET, MSET, DEL, UNLINK, EXISTS, TOUCH over several nodes run as one "
                 "isolated transaction; MSETNX, RENAME, RENAMENX, COPY over several nodes work"},
            Field<C, bool>{kCluster, &C::atomic_multikey}),
        bool_row(Head{"persistence", "appendonly", "--appendonly", "appendonly", true,
                      "Log every write to the append-only file and replay it at start-up"},
                 Field<P, bool>{kPersistence, &P::appendonly}),
        enum_row(Head{"persistence", "appendfsync", "--appendfsync", "appendfsync", true,
                      "When the file is fsynced: always (before replies), everysec or no (the OS)"},
                 Field<P, std::string>{kPersistence, &P::appendfsync},
                 {kFsyncEverysec, kFsyncAlways, kFsyncNo}, {}),
        protected_in_redis(absolute_in_config_get(string_row(
            Head{"persistence", "dir", "--dir", "dir", false,
                 "Directory of the append-only file (and its rewrites), the RDB file and the ring "
                 "file"},
            Field<P, std::string>{kPersistence, &P::dir}, check_not_empty))),
        immutable_in_redis(
            string_row(Head{"persistence", "appendfilename", "--appendfilename", "appendfilename",
                            false, "Name of the append-only file inside dir"},
                       Field<P, std::string>{kPersistence, &P::appendfilename}, check_file_name)),
        int_row(Head{"persistence", "auto-aof-rewrite-percentage", "--auto-aof-rewrite-percentage",
                     "auto-aof-rewrite-percentage", true,
                     "Rewrite the file when it grew by this % since the last rewrite (0 = never)"},
                Field<P, int64_t>{kPersistence, &P::auto_aof_rewrite_percentage}, 0, kIntMax),
        size_row(Head{"persistence", "auto-aof-rewrite-min-size", "--auto-aof-rewrite-min-size",
                      "auto-aof-rewrite-min-size", true,
                      "Never rewrite automatically a file smaller than this (bytes, or 64mb...)"},
                 Field<P, int64_t>{kPersistence, &P::auto_aof_rewrite_min_size}, 0),
        bool_row(
            Head{"persistence", "aof-load-truncated", "--aof-load-truncated", "aof-load-truncated",
                 true, "Start with an incomplete last record cut off (no: refuse to start)"},
            Field<P, bool>{kPersistence, &P::aof_load_truncated}),
        bool_row(Head{"persistence", "aof-use-rdb-preamble", "--aof-use-rdb-preamble",
                      "aof-use-rdb-preamble", true,
                      "A rewrite writes the data as an RDB, then the commands that follow"},
                 Field<P, bool>{kPersistence, &P::aof_use_rdb_preamble}),
        save_row(Head{"persistence", "save", "--save", "save", true,
                      "Snapshot rules: \"seconds changes ...\" pairs (BGSAVE after that many "
                      "changes within that many seconds); \"\" = none"},
                 Field<P, std::string>{kPersistence, &P::save}),
        bool_row(Head{"persistence", "stop-writes-on-bgsave-error", "--stop-writes-on-bgsave-error",
                      "stop-writes-on-bgsave-error", true,
                      "While save rules are set and the last BGSAVE failed, write commands (and "
                      "PING) answer -MISCONF until a SAVE or BGSAVE succeeds"},
                 Field<P, bool>{kPersistence, &P::stop_writes_on_bgsave_error}),
        protected_in_redis(
            string_row(Head{"persistence", "dbfilename", "--dbfilename", "dbfilename", false,
                            "Name of the RDB file inside dir (SAVE, BGSAVE, loaded at start-up "
                            "without the append-only file)"},
                       Field<P, std::string>{kPersistence, &P::dbfilename}, check_file_name)),
        bool_row(Head{"persistence", "rdbcompression", "--rdbcompression", "rdbcompression", true,
                      "LZF-compress strings over 20 bytes in RDB files and DUMP payloads"},
                 Field<P, bool>{kPersistence, &P::rdbcompression}),
        immutable_in_redis(
            bool_row(Head{"persistence", "rdbchecksum", "--rdbchecksum", "rdbchecksum", false,
                          "End RDB files with a CRC64 checksum (no: zero, not checked on load)"},
                     Field<P, bool>{kPersistence, &P::rdbchecksum})),
        string_row(Head{"security", "requirepass", "--requirepass", "requirepass", true,
                        "Password clients must AUTH with (empty = none)"},
                   Field<Sec, std::string>{kSecurity, &Sec::requirepass}, nullptr),
        immutable_in_redis(string_row(
            Head{"security", "aclfile", "--aclfile", "aclfile", false,
                 "ACL users file, loaded at start, ACL LOAD and ACL SAVE (empty = none)"},
            Field<Sec, std::string>{kSecurity, &Sec::aclfile}, nullptr)),
        int_row(Head{"security", "acllog-max-len", "--acllog-max-len", "acllog-max-len", true,
                     "Entries the ACL LOG keeps"},
                Field<Sec, int64_t>{kSecurity, &Sec::acllog_max_len}, 0, kInt64Max),
        enum_row(Head{"security", "acl-pubsub-default", "--acl-pubsub-default",
                      "acl-pubsub-default", true,
                      "Channels a new user, selector or reset user starts with: resetchannels "
                      "(none) or allchannels"},
                 Field<Sec, std::string>{kSecurity, &Sec::acl_pubsub_default},
                 {"allchannels", "resetchannels"}, {}),
        bool_row(Head{"security", "protected-mode", "--protected-mode", "protected-mode", true,
                      "Without a password, refuse clients from non-loopback addresses"},
                 Field<Sec, bool>{kSecurity, &Sec::protected_mode}),
        rename_row(Head{"security", "rename-command", "", "", false,
                        "Commands renamed or disabled: { FLUSHALL = \"\", CONFIG = \"CFG_x1\" }"}),
        immutable_in_redis(enum_row(
            Head{"security", "enable-debug-command", "--enable-debug-command",
                 "enable-debug-command", false, "Who may run DEBUG: no, yes or local (loopback)"},
            Field<Sec, std::string>{kSecurity, &Sec::enable_debug_command}, {"no", "yes", "local"},
            {})),
        redis_log_levels(enum_row(
            Head{"log", "level", "--loglevel,--log-level", "loglevel", true,
                 "Least severe level logged: trace, debug, info, warn or error (CONFIG GET/SET "
                 "name them as Redis does: debug, verbose, notice, warning)"},
            Field<L, std::string>{kLog, &L::level}, {"trace", "debug", "info", "warn", "error"},
            {{"verbose", "debug"}, {"notice", "info"}, {"warning", "warn"}})),
        immutable_in_redis(string_row(Head{"log", "file", "--logfile,--log-file", "logfile", false,
                                           "Log file path (empty = stderr)"},
                                      Field<L, std::string>{kLog, &L::file}, nullptr)),
        int_row(Head{"log", "slowlog-log-slower-than", "--slowlog-log-slower-than",
                     "slowlog-log-slower-than", true,
                     "Microseconds a command runs to enter the slow log (negative = never)"},
                Field<L, int64_t>{kLog, &L::slowlog_log_slower_than}, -1, kInt64Max),
        int_row(Head{"log", "slowlog-max-len", "--slowlog-max-len", "slowlog-max-len", true,
                     "Entries the slow log keeps"},
                Field<L, int64_t>{kLog, &L::slowlog_max_len}, 0, kInt64Max),
        int_row(Head{"log", "latency-monitor-threshold", "--latency-monitor-threshold",
                     "latency-monitor-threshold", true,
                     "Milliseconds an event takes to be kept by LATENCY (0 = off)"},
                Field<L, int64_t>{kLog, &L::latency_monitor_threshold}, 0, kInt64Max),
        bool_row(Head{"log", "latency-tracking", "--latency-tracking", "latency-tracking", true,
                      "Keep per-command latency histograms (INFO latencystats)"},
                 Field<L, bool>{kLog, &L::latency_tracking}),
        latency_percentiles_row(),
    };
    for (Row& row : tls_rows()) base.push_back(std::move(row));
    return base;
  }();
  return kRows;
}

}  // namespace ringkv::conf::detail
