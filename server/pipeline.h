// The origin of a command. Every command, wherever it comes from, runs through one pipeline
// (Server::run, pipeline.cpp):
//
//   cross-protocol guard (an HTTP request closes a client) → resolve (client names or table
//   names) → authentication → subscribed-mode rules →
//   transaction (cluster pinning, MULTI queueing) → routing (relay, split, fan-out) →
//   memory limit → handler (blocking, key events, append-only record) → observed (command
//   stats, slow log, latency monitor, MONITOR: Server::observe) → blocked clients served
//
// What differs by origin is which of these steps apply, decided here and nowhere else.
#pragma once

#include <cstdint>
#include <string_view>

#include "server/connection.h"

namespace ringkv::server {

class Connection;

struct Origin {
  enum class Kind : uint8_t {
    kClient,        // a request from a client connection
    kPeer,          // a frame relayed by a peer: runs here, never routed again
    kPart,          // this node's part of a command split or fanned out for a client here
    kBlockedRetry,  // a blocked client's command, run again (its keys were written, or it timed
                    // out)
    kTransaction,   // a command queued in MULTI, run by EXEC
    kReplay,        // a record of the append-only file being loaded
    kScript,        // a command a script called (redis.call): runs here, never waits, never
                    // queued; its effects are recorded as part of the script's
    kMigration,     // a key a ring change copies here (RINGKV.MIGRATE): as kPeer, but taken
                    // whether or not this node holds its lease
    kReplica,       // a write of a primary's replication stream: runs here (even while a
                    // script is busy), never expires what it touches, recorded, not sent on
  };

  Kind kind;
  Connection* conn = nullptr;    // the client the command runs for; null for kPart and kReplay
  bool timed_out = false;        // kBlockedRetry: the wait is over, answer as timed out
  std::string_view ready_key{};  // kBlockedRetry: the key whose write woke the client, if any
  int db = 0;                    // the database, for origins without a client (kReplay, kPart)

  static Origin client(Connection& c) { return {Kind::kClient, &c}; }
  static Origin peer(Connection& c) { return {Kind::kPeer, &c}; }
  static Origin part(int db = 0) { return {Kind::kPart, nullptr, false, {}, db}; }
  static Origin blocked_retry(Connection& c, bool timed_out, std::string_view key = {}) {
    return {Kind::kBlockedRetry, &c, timed_out, key};
  }
  static Origin transaction(Connection& c) { return {Kind::kTransaction, &c}; }
  static Origin replay(int db = 0) { return {Kind::kReplay, nullptr, false, {}, db}; }
  static Origin script(Connection* c) { return {Kind::kScript, c}; }
  static Origin replica(Connection& c) { return {Kind::kReplica, &c}; }
  static Origin migration(Connection& c) { return {Kind::kMigration, &c}; }

  // The database the command runs in: its client's SELECTed one.
  int database() const { return conn != nullptr ? conn->db() : db; }

  // The command name is looked up as clients call it (rename-command applies).
  bool uses_client_names() const { return kind == Kind::kClient; }
  // NOAUTH, subscribed-mode rules, cluster transactions and routing: a client's request only.
  bool is_client() const { return kind == Kind::kClient; }
  // A request read from a connection: it may be queued by MULTI and is the client's last command.
  bool is_request() const {
    return kind == Kind::kClient || kind == Kind::kPeer || kind == Kind::kMigration ||
           kind == Kind::kReplica;
  }
  // Answered -BUSY while a script is busy (a primary's stream is not: it writes other keys).
  bool refused_while_busy() const {
    return kind == Kind::kClient || kind == Kind::kPeer || kind == Kind::kMigration;
  }
  // Runs keyed commands here only while this node holds its lease (failover; a replica's stream
  // and replay are not serving clients).
  bool needs_lease() const {
    return kind == Kind::kClient || kind == Kind::kPeer || kind == Kind::kPart ||
           kind == Kind::kTransaction || kind == Kind::kScript;
  }
  // Its reply waits until `replica-acks` replicas have its writes.
  bool waits_for_replicas() const { return kind == Kind::kClient || kind == Kind::kPeer; }
  // maxmemory is enforced before commands that arrive from outside; a transaction's commands
  // were checked at EXEC, a blocked client's when it first ran, and replay restores what was.
  bool checks_memory() const {
    return kind == Kind::kClient || kind == Kind::kPeer || kind == Kind::kMigration ||
           kind == Kind::kPart;
  }
  // Writes are refused while the node cannot persist them (stop-writes-on-bgsave-error) or too
  // few replicas would have them (min-replicas-to-write): those of clients, here or relayed; a
  // primary's stream, migration and replay are applied.
  bool checks_writes() const {
    return kind == Kind::kClient || kind == Kind::kPeer || kind == Kind::kPart;
  }
  // Its PUBLISH ran here alone, not fanned out to every member (a script's, a transaction's):
  // the message is forwarded to the others' subscribers.
  bool forwards_publish() const { return kind == Kind::kScript || kind == Kind::kTransaction; }
  // A blocking command that finds nothing may wait (else it answers as timed out).
  bool can_block() const {
    return conn != nullptr && kind != Kind::kReplica &&
           (is_request() || (kind == Kind::kBlockedRetry && !timed_out));
  }
  // A change is recorded in the append-only file (replay is reading it).
  bool records() const { return kind != Kind::kReplay; }
  // Clients blocked on keys this command wrote are served right after it. Not in the middle of
  // EXEC (they are served after it, as Redis does), nor from inside that serving or replay.
  bool serves_blocked() const {
    return kind == Kind::kClient || kind == Kind::kPeer || kind == Kind::kMigration ||
           kind == Kind::kPart;
  }
};

}  // namespace ringkv::server
