// [cluster] atomic-multikey: a multi-key command whose keys live on several nodes runs as one
// cross-node transaction (cluster/cross_txn.h) instead of independent parts. MGET, MSET, DEL,
// UNLINK, EXISTS and TOUCH run their per-owner fragments under the locks of all their keys and
// merge the replies as the split does; MSETNX, RENAME, RENAMENX and COPY, which Redis Cluster
// and the default refuse with CROSSSLOT, read what they need under the locks first (EXISTS, or
// DUMP and PEXPIRETIME of the source), then write (MSET fragments, or RESTORE ... ABSTTL of the
// destination and DEL of the source). Nobody sees the command half done.
#include <spdlog/spdlog.h>

#include "cluster/cluster.h"
#include "cluster/merge.h"
#include "common/numbers.h"
#include "engine/commands/string_ops.h"
#include "protocol/errors.h"
#include "protocol/reply_reader.h"
#include "server/connection.h"
#include "server/server.h"

namespace ringkv::server {
namespace {

using Commands = std::vector<std::vector<std::string>>;

// The one reply of a RUN of one command ("*1\r\n<reply>"), or the RUN's error reply.
std::string only_reply(std::string_view run_reply) {
  std::vector<std::string_view> elements;
  if (cluster::split_array(run_reply, elements) && elements.size() == 1) {
    return std::string(elements[0]);
  }
  return std::string(run_reply);
}

// COPY's options as its handler reads them: REPLACE and DB naming the client's own database
// `client_db`. False when the handler would answer an error (it then runs here and answers it);
// `other_db` when DB names another database (its source and destination are then on two nodes
// and in two databases: refused with CROSSSLOT as without atomic-multikey).
bool copy_options(std::span<const std::string_view> argv, int client_db, bool& replace,
                  bool& other_db) {
  replace = false;
  other_db = false;
  for (size_t i = 3; i < argv.size(); ++i) {
    int64_t db = 0;
    if (common::equals_ignore_case(argv[i], "replace")) {
      replace = true;
    } else if (common::equals_ignore_case(argv[i], "db") && i + 1 < argv.size() &&
               engine::parse_int64(argv[i + 1], db) && db >= 0) {
      if (db != client_db) other_db = true;
      ++i;
    } else {
      return false;
    }
  }
  return true;
}

// The state of one atomic command across its callbacks.
struct Atomic {
  std::shared_ptr<cluster::TxnSession> session;
  std::function<void(std::string_view reply)> finish;  // the client's reply, once
  // Ends the command: releases what is still locked and answers.
  void end(std::string_view reply) {
    session->finish();
    auto f = std::move(finish);
    if (f) f(reply);
  }
  // A RUN that failed on its link may have run: the reply names what ran where.
  void failed() { end(cluster::error_reply(session->incomplete_error())); }
};

}  // namespace

bool Server::relay_atomic(Connection& conn, const engine::CommandSpec& spec,
                          std::span<const std::string_view> argv, const cluster::Route& route,
                          protocol::ReplyWriter& writer) {
  static const engine::CommandSpec* const kMsetnx = engine::find_command("msetnx");
  static const engine::CommandSpec* const kRename = engine::find_command("rename");
  static const engine::CommandSpec* const kRenamenx = engine::find_command("renamenx");
  static const engine::CommandSpec* const kCopy = engine::find_command("copy");
  const bool two_keys = &spec == kRename || &spec == kRenamenx || &spec == kCopy;
  if (route.kind != cluster::RouteKind::kSplit &&
      !(route.kind == cluster::RouteKind::kCrossSlot && (&spec == kMsetnx || two_keys))) {
    return false;
  }
  bool replace = &spec == kRename;
  bool other_db = false;
  if (&spec == kCopy && copy_options(argv, conn.db(), replace, other_db) && other_db) {
    return false;
  }
  if (&spec == kCopy && !copy_options(argv, conn.db(), replace, other_db)) {
    // A bad option: the command answers its error (before it would touch a key).
    run(Origin::part(conn.db()), spec, argv, writer);
    return true;
  }
  const hashring::HashRing& ring = cluster_->routing_ring();
  std::vector<cluster::TxnPart> parts;
  auto part_of = [&](size_t node) -> size_t {
    for (size_t p = 0; p < parts.size(); ++p) {
      if (parts[p].node == node) return p;
    }
    cluster::TxnPart& part = parts.emplace_back();
    part.node = node;
    part.deny_oom = (spec.flags & engine::kDenyOom) != 0;
    part.writes = (spec.flags & engine::kWrite) != 0;
    return parts.size() - 1;
  };
  // MSETNX: the key-value pairs per owner; RENAME, RENAMENX, COPY: the source's part, then the
  // destination's; the split commands: their fragments.
  std::vector<Commands> writes;
  if (route.kind == cluster::RouteKind::kSplit) {
    for (const cluster::Fragment& f : route.fragments) {
      cluster::TxnPart& part = parts[part_of(f.node)];
      for (size_t g : f.groups) part.keys.emplace_back(argv[g]);
      part.commands.push_back(cluster::fragment_command(argv, route, f));
    }
  } else if (&spec == kMsetnx) {
    for (size_t i = 1; i + 1 < argv.size(); i += 2) {
      const size_t p = part_of(ring.owner_index(argv[i]));
      parts[p].keys.emplace_back(argv[i]);
      if (writes.size() <= p) writes.resize(p + 1, Commands{{"MSET"}});
      writes[p][0].emplace_back(argv[i]);
      writes[p][0].emplace_back(argv[i + 1]);
    }
  } else {
    parts[part_of(ring.owner_index(argv[1]))].keys.emplace_back(argv[1]);
    parts[part_of(ring.owner_index(argv[2]))].keys.emplace_back(argv[2]);
  }

  Connection::ReplySlot slot = conn.reserve_reply();
  conn.protect();
  const uint64_t id = conn.id();
  const protocol::RespVersion resp = writer.version();
  auto a = std::make_shared<Atomic>();
  a->session = cluster_->begin_transaction(id, parts, resp, conn.db(), false);
  a->finish = [this, id, slot](std::string_view reply) {
    count_error_reply(reply);
    slot.fill(reply);
    if (Connection* c = find_client(id)) c->unprotect();
  };
  auto refused = [](const cluster::TxnOutcome& o) {
    if (o.kind == cluster::TxnOutcome::kRingChanged) {
      return cluster::error_reply(
          "TRYAGAIN the cluster ring changed while the command ran; nothing was applied");
    }
    return cluster::error_reply(o.error);
  };

  if (route.kind == cluster::RouteKind::kSplit) {
    // One RUN per owner under every lock; the split's merge makes one reply of them.
    auto merge =
        std::make_shared<cluster::ReplyMerge>(spec.merge, (spec.flags & engine::kWrite) != 0, resp,
                                              route.fragments.size(), [a](std::string_view reply) {
                                                auto f = std::move(a->finish);
                                                if (f) f(reply);
                                              });
    for (const cluster::Fragment& f : route.fragments) {
      merge->set_positions(part_of(f.node), cluster::fragment_positions(spec, route, f));
    }
    a->session->execute([a, merge, refused](cluster::TxnOutcome o) {
      if (o.kind != cluster::TxnOutcome::kCommitted) {
        auto f = std::move(a->finish);
        if (f) f(refused(o));
        return;
      }
      for (size_t p = 0; p < o.replies.size(); ++p) {
        merge->part_done(p, true, only_reply(o.replies[p]));
      }
    });
    return true;
  }

  if (&spec == kMsetnx) {
    a->session->lock([a, parts, writes, refused](cluster::TxnOutcome o) {
      if (o.kind != cluster::TxnOutcome::kCommitted) return a->end(refused(o));
      // Whether any key exists, every part under its locks.
      struct Count {
        size_t waiting;
        int64_t found = 0;
        std::string error;
      };
      auto count = std::make_shared<Count>(Count{parts.size(), 0, {}});
      for (size_t p = 0; p < parts.size(); ++p) {
        std::vector<std::string> exists{"EXISTS"};
        exists.insert(exists.end(), parts[p].keys.begin(), parts[p].keys.end());
        a->session->run(
            p, {exists}, false,
            [a, count, writes](std::string_view reply, const std::string* error) {
              const std::string one = only_reply(reply);
              protocol::ReplyValue v;
              if (error != nullptr) {
                count->error = cluster::error_reply(*error);
              } else if (one.empty() || one[0] != ':' || !protocol::decode_reply(one, v)) {
                count->error = !one.empty() && one[0] == '-'
                                   ? one
                                   : cluster::error_reply("ERR malformed reply from a peer");
              } else {
                count->found += v.integer;
              }
              if (--count->waiting > 0) return;
              // EXISTS wrote nothing anywhere.
              if (!count->error.empty()) return a->end(count->error);
              if (count->found > 0) return a->end(":0\r\n");
              auto left = std::make_shared<size_t>(writes.size());
              auto ok = std::make_shared<bool>(true);
              for (size_t q = 0; q < writes.size(); ++q) {
                a->session->run(q, writes[q], true,
                                [a, left, ok](std::string_view r, const std::string* e) {
                                  if (e != nullptr || only_reply(r) != "+OK\r\n") *ok = false;
                                  if (--*left > 0) return;
                                  if (*ok) return a->end(":1\r\n");
                                  a->failed();
                                });
              }
            });
      }
    });
    return true;
  }

  // RENAME, RENAMENX, COPY: the source's value and expiry, under both locks.
  const std::string from(argv[1]);
  const std::string to(argv[2]);
  const size_t src = part_of(ring.owner_index(argv[1]));
  const size_t dst = part_of(ring.owner_index(argv[2]));
  const bool copy = &spec == kCopy;
  const bool nx = &spec == kRenamenx;
  a->session->lock([a, from, to, src, dst, copy, nx, replace, refused](cluster::TxnOutcome o) {
    if (o.kind != cluster::TxnOutcome::kCommitted) return a->end(refused(o));
    // COPY leaves the source as it is: its lock goes with this read.
    a->session->run(
        src, {{"DUMP", from}, {"PEXPIRETIME", from}}, copy,
        [a, from, to, src, dst, copy, nx, replace](std::string_view reply,
                                                   const std::string* error) {
          if (error != nullptr) return a->end(cluster::error_reply(*error));
          protocol::ReplyValue v;
          if (!protocol::decode_reply(reply, v) || v.type != '*' || v.elements.size() != 2) {
            return a->end(reply[0] == '-' ? std::string(reply)
                                          : cluster::error_reply("ERR malformed reply"));
          }
          if (v.elements[0].null) {
            return a->end(copy ? ":0\r\n" : cluster::error_reply(protocol::err::kNoSuchKey));
          }
          const int64_t expires = v.elements[1].integer;
          Commands restore{{"RESTORE", to, std::to_string(expires > 0 ? expires : 0),
                            std::string(v.elements[0].text), "ABSTTL"}};
          if (replace) restore[0].push_back("REPLACE");
          // Without REPLACE a destination that exists leaves everything as it is.
          auto write = [a, from, src, dst, copy, nx, restore] {
            a->session->run(dst, restore, true,
                            [a, from, src, copy, nx](std::string_view r, const std::string* e) {
                              if (e != nullptr) return a->failed();
                              const std::string one = only_reply(r);
                              if (one != "+OK\r\n") return a->end(one);
                              if (copy) return a->end(":1\r\n");
                              a->session->run(src, {{"DEL", from}}, true,
                                              [a, nx](std::string_view d, const std::string* de) {
                                                if (de != nullptr || only_reply(d) != ":1\r\n") {
                                                  return a->failed();
                                                }
                                                a->end(nx ? ":1\r\n" : "+OK\r\n");
                                              });
                            });
          };
          if (replace) return write();
          a->session->run(dst, {{"EXISTS", to}}, false,
                          [a, write](std::string_view r, const std::string* e) {
                            if (e != nullptr) return a->end(cluster::error_reply(*e));
                            const std::string one = only_reply(r);
                            if (one == ":1\r\n") return a->end(":0\r\n");
                            if (one != ":0\r\n") return a->end(one);
                            write();
                          });
        });
  });
  return true;
}

}  // namespace ringkv::server
