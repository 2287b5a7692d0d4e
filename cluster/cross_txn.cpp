// Cross-node transactions: the coordinator's side (see cross_txn.h for the protocol).
#include "cluster/cross_txn.h"

#include <algorithm>
#include <chrono>

#include "cluster/cluster.h"
#include "cluster/cluster_internal.h"
#include "protocol/reply_reader.h"
#include "protocol/request_writer.h"

namespace ringkv::cluster {
namespace {

// Idle transaction links kept per peer for the next transactions.
constexpr size_t kIdleTransactionLinks = 64;

void append_frame(std::string& f, std::span<const std::string_view> argv) {
  protocol::append_request(f, argv);
}

std::string error_text(std::string_view reply) {
  return std::string(reply.size() >= 3 && reply[0] == '-' ? line_text(reply) : reply);
}

}  // namespace

struct TxnSession::Member {
  enum State {
    kIdle,        // nothing sent (or its LOCK failed: nothing held)
    kLocking,     // LOCK sent, not answered
    kLocked,      // holds its locks
    kRan,         // its part ran (and released)
    kNotApplied,  // its RUN was refused: nothing of it ran
    kUnknown,     // its RUN was sent but not answered: it may have run
  };
  TxnPart part;
  size_t given = 0;  // index in the parts as given
  std::string address;
  bool self = false;
  Cluster::PeerState* peer = nullptr;
  std::unique_ptr<PeerLink> link;
  State state = kIdle;
  std::string reply;    // kRan: its array reply
  std::string failure;  // kNotApplied, kUnknown: why
};

LinkOptions Cluster::transaction_link_options() const {
  const auto request = static_cast<uint64_t>(options_.request_timeout_ms);
  const auto connect = static_cast<uint64_t>(options_.connect_timeout_ms);
  return LinkOptions{connect, request + std::max<uint64_t>(250, request / 4), connect};
}

std::unique_ptr<PeerLink> Cluster::take_transaction_link(size_t node, uint64_t client_id,
                                                         bool watches, bool& watches_lost) {
  PeerState* peer = peers_[routing_to_full_[node]];
  watches_lost = false;
  auto it = watches ? transaction_links_.find(client_id) : transaction_links_.end();
  if (it != transaction_links_.end()) {
    for (auto t = it->second.begin(); t != it->second.end(); ++t) {
      if (t->node != peer) continue;
      // The connection that held the WATCHes is gone: the peer forgot them.
      watches_lost = t->link->stats().connects != t->connects;
      std::unique_ptr<PeerLink> link = std::move(t->link);
      it->second.erase(t);
      if (it->second.empty()) transaction_links_.erase(it);
      return link;
    }
  }
  if (!peer->idle_transaction_links.empty()) {
    std::unique_ptr<PeerLink> link = std::move(peer->idle_transaction_links.back());
    peer->idle_transaction_links.pop_back();
    return link;
  }
  return make_link(*peer, transaction_link_options());
}

void Cluster::give_back_transaction_link(PeerState& peer, std::unique_ptr<PeerLink> link,
                                         bool clean) {
  if (!link) return;
  if (!started_) {
    // Shutting down: nothing may keep the loop alive.
    link->close(LinkErrorKind::kShutdown);
    retired_links_.push_back(std::move(link));
    return;
  }
  const bool usable = link->state() == PeerLink::State::kReady ||
                      link->state() == PeerLink::State::kConnecting ||
                      link->state() == PeerLink::State::kHandshaking;
  if (clean && usable && peer.up && peer.idle_transaction_links.size() < kIdleTransactionLinks) {
    peer.idle_transaction_links.push_back(std::move(link));
    return;
  }
  retired_links_.push_back(std::move(link));
}

void Cluster::for_each_transaction_link(const std::function<void(PeerLink&)>& f) {
  // Collected first: a callback run by f may end a session or give a link back.
  std::vector<PeerLink*> links;
  for (auto& [id, list] : transaction_links_) {
    for (TransactionLink& t : list) links.push_back(t.link.get());
  }
  for (TxnSession* s : sessions_) {
    for (auto& m : s->members_) {
      if (m->link) links.push_back(m->link.get());
    }
  }
  for (PeerLink* link : links) f(*link);
}

std::shared_ptr<TxnSession> Cluster::begin_transaction(uint64_t client_id,
                                                       std::vector<TxnPart> parts,
                                                       protocol::RespVersion resp, int db,
                                                       bool watches) {
  return std::make_shared<TxnSession>(*this, client_id, std::move(parts), resp, db, watches);
}

TxnSession::TxnSession(Cluster& cluster, uint64_t client_id, std::vector<TxnPart> parts,
                       protocol::RespVersion resp, int db, bool watches)
    : cluster_(cluster), client_id_(client_id), resp_(resp), db_(db), watches_(watches) {
  members_.reserve(parts.size());
  for (size_t i = 0; i < parts.size(); ++i) {
    auto m = std::make_unique<Member>();
    m->given = i;
    m->address = cluster_.routing_.nodes()[parts[i].node].address;
    m->self = parts[i].node == cluster_.router_.self();
    if (!m->self) m->peer = cluster_.peers_[cluster_.routing_to_full_[parts[i].node]];
    m->part = std::move(parts[i]);
    members_.push_back(std::move(m));
  }
  // The one global order every coordinator locks in.
  std::sort(members_.begin(), members_.end(),
            [](const auto& a, const auto& b) { return a->address < b->address; });
  order_.resize(members_.size());
  for (size_t i = 0; i < members_.size(); ++i) order_[members_[i]->given] = i;
  epoch_ = cluster_.routing_epoch_;
  cluster_.sessions_.insert(this);
}

TxnSession::~TxnSession() {
  cluster_.sessions_.erase(this);
  for (auto& m : members_) {
    if (m->link) cluster_.retired_links_.push_back(std::move(m->link));
  }
}

const std::string& TxnSession::address(size_t part) const {
  return members_[order_[part]]->address;
}

void TxnSession::execute(TxnDone done) {
  execute_ = true;
  done_ = std::move(done);
  if (prepare()) try_at_once();
}

void TxnSession::lock(TxnDone done) {
  done_ = std::move(done);
  ordered_ = true;
  if (prepare()) lock_from(0);
}

bool TxnSession::prepare() {
  deadline_ms_ =
      uv_now(cluster_.loop_) + static_cast<uint64_t>(cluster_.options_.request_timeout_ms);
  for (auto& m : members_) {
    if (m->self) continue;
    if (std::optional<LinkError> why = cluster_.unavailable_error(*m->peer)) {
      abort(TxnOutcome::kAborted, why->text());
      return false;
    }
  }
  bool watches_lost = false;
  for (auto& m : members_) {
    if (m->self) continue;
    bool lost = false;
    m->link = cluster_.take_transaction_link(m->part.node, client_id_, watches_, lost);
    watches_lost = watches_lost || lost;
  }
  // A connection that held WATCHes closed since: as for a changed key.
  if (watches_lost) abort(TxnOutcome::kWatched, {});
  return !ended_;
}

std::string TxnSession::lock_frame(const Member& m, bool wait) const {
  const uint64_t now = uv_now(cluster_.loop_);
  // Waiting, at least 1 ms: a LOCK with 0 answers kTxnBusy instead of waiting.
  const std::string wait_ms =
      wait ? std::to_string(deadline_ms_ > now + 1 ? deadline_ms_ - now : 1) : "0";
  // Long enough for the other participants' lock waits and the RUN to come.
  const std::string lease = std::to_string(2 * cluster_.options_.request_timeout_ms + 1000);
  const std::string checks = std::to_string(m.part.refusal_checks());
  std::vector<std::string_view> argv{"RINGKV.TXN", "LOCK", wait_ms, lease, checks};
  for (const std::string& k : m.part.keys) argv.push_back(k);
  std::string f;
  append_frame(f, argv);
  return f;
}

std::string TxnSession::run_frame(const std::vector<std::vector<std::string>>& commands,
                                  bool release) const {
  std::vector<std::string> counts;
  counts.reserve(commands.size() + 1);
  counts.push_back(std::to_string(commands.size()));
  for (const auto& c : commands) counts.push_back(std::to_string(c.size()));
  // The participant refuses a RUN that reaches it after this coordinator gave up on its answer
  // (a participant stopped and continued): that part is then surely not applied.
  const auto unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
  const std::string not_after = std::to_string(unix_ms + cluster_.options_.request_timeout_ms);
  // The part runs in the client's database (locks are by key name, whatever the database).
  std::string db;
  std::vector<std::string_view> argv = peer_prefix_args({.db = db_}, db);
  argv.insert(argv.end(), {"RINGKV.TXN", "RUN", resp_ == protocol::RespVersion::kResp3 ? "3" : "2",
                           release ? "1" : "0", not_after, counts[0]});
  for (size_t i = 0; i < commands.size(); ++i) {
    argv.push_back(counts[i + 1]);
    for (const std::string& a : commands[i]) argv.push_back(a);
  }
  std::string f;
  append_frame(f, argv);
  return f;
}

void TxnSession::send(Member& m, const std::string& frame,
                      std::function<void(std::string_view, const LinkError*)> cb) {
  // A link that failed at once ended the transaction inside an earlier send (its callback ran
  // there) and went back to the cluster: nothing more goes out.
  if (!m.link) return;
  m.link->frame_buffer().append(frame);
  cluster_.relayed_++;
  const uint64_t generation = generation_;
  m.link->commit(
      [this, generation, cb = std::move(cb)](std::string_view reply, const LinkError* error) {
        if (error != nullptr) cluster_.relay_errors_++;
        // An answer to the attempt given up for the ordered one (see try_at_once) counts not.
        if (generation != generation_) return;
        cb(reply, error);
      });
}

void TxnSession::release_frame(Member& m, bool final) {
  if (!m.link) return;
  static constexpr std::string_view kRelease[] = {"RINGKV.TXN", "RELEASE", "1"};
  static constexpr std::string_view kReleaseKeep[] = {"RINGKV.TXN", "RELEASE", "0"};
  std::string f;
  append_frame(f, final ? std::span<const std::string_view>(kRelease)
                        : std::span<const std::string_view>(kReleaseKeep));
  m.link->frame_buffer().append(f);
  m.link->commit([](std::string_view, const LinkError*) {});
  if (m.link) m.link->flush();
}

void TxnSession::try_at_once() {
  // Every key taken at once with no waiting (no cycle can form: nobody waits), the one remote
  // participant's RUN with its LOCK: one round trip when keys are free. A key held elsewhere
  // sends the transaction down the ordered path.
  std::vector<size_t> remote;
  for (size_t i = 0; i < members_.size(); ++i) {
    Member& m = *members_[i];
    if (!m.self) {
      remote.push_back(i);
      continue;
    }
    std::string answer;
    cluster_.txn_host_->lock_here(client_id_, m.part.keys, watches_, m.part.refusal_checks(), 0,
                                  [&answer](std::string_view reply) { answer.assign(reply); });
    if (answer == kTxnBusy) return lock_in_order();
    if (answer != kTxnLocked) return on_locked(i, answer, nullptr);
    m.state = Member::kLocked;
  }
  if (cluster_.routing_epoch_ != epoch_) return abort(TxnOutcome::kRingChanged, {});
  auto self = shared_from_this();
  at_once_waiting_ = remote.size();
  for (size_t i : remote) {
    Member& m = *members_[i];
    m.state = Member::kLocking;
    send(m, lock_frame(m, false), [self, i](std::string_view reply, const LinkError* error) {
      self->on_locked_at_once(i, reply, error);
    });
    if (remote.size() == 1) {
      send(m, run_frame(m.part.commands, true),
           [self, i](std::string_view reply, const LinkError* error) {
             const std::string text = error ? error->text() : std::string();
             self->on_last_run(i, reply, error ? &text : nullptr);
           });
    }
    if (ended_) return;  // its LOCK failed at once
    m.link->flush();
  }
}

void TxnSession::on_locked_at_once(size_t i, std::string_view reply, const LinkError* error) {
  if (ended_) return;
  Member& m = *members_[i];
  if (error == nullptr && reply == kTxnBusy) {
    m.state = Member::kIdle;
    busy_ = true;
  } else if (error == nullptr && reply == kTxnLocked) {
    m.state = Member::kLocked;
  } else {
    // WATCHED, an error or a failed link: the transaction ends (a single remote's RUN travelled
    // with the LOCK: on a link that failed after sending, it may have run).
    return on_locked(i, reply, error, remote_count() == 1);
  }
  if (--at_once_waiting_ > 0) return;
  if (busy_) return lock_in_order();
  // With one remote participant its RUN answers next; with more, all are locked: run them.
  if (remote_count() > 1) commit_rest();
}

size_t TxnSession::remote_count() const {
  size_t n = 0;
  for (const auto& m : members_) n += m->self ? 0 : 1;
  return n;
}

void TxnSession::lock_in_order() {
  // What the first attempt took is given back (WATCHes stay: they are checked again).
  generation_++;
  busy_ = false;
  ordered_ = true;
  for (auto& mp : members_) {
    Member& m = *mp;
    if (m.self) {
      if (m.state == Member::kLocked) cluster_.txn_host_->release_here(client_id_);
    } else if (m.state == Member::kLocked || m.state == Member::kLocking) {
      release_frame(m, false);
    }
    m.state = Member::kIdle;
  }
  lock_from(0);
}

void TxnSession::lock_from(size_t i) {
  if (ended_) return;
  if (i == members_.size()) {
    // lock(): every part is locked; the command goes on with run().
    TxnDone done = std::move(done_);
    if (done) done(TxnOutcome{TxnOutcome::kCommitted, {}, {}});
    return;
  }
  Member& m = *members_[i];
  const bool runs_now = execute_ && i + 1 == members_.size();
  // The last participant runs with its LOCK: the ring must not have moved under the others.
  if (runs_now && cluster_.routing_epoch_ != epoch_) return abort(TxnOutcome::kRingChanged, {});
  auto self = shared_from_this();
  m.state = Member::kLocking;
  if (m.self) {
    if (m.part.keys.empty() && !watches_) return on_locked(i, kTxnLocked, nullptr);
    const uint64_t now = uv_now(cluster_.loop_);
    const uint64_t generation = generation_;
    cluster_.txn_host_->lock_here(client_id_, m.part.keys, watches_, m.part.refusal_checks(),
                                  deadline_ms_ > now + 1 ? deadline_ms_ - now : 1,
                                  [self, i, generation](std::string_view reply) {
                                    if (generation == self->generation_)
                                      self->on_locked(i, reply, nullptr);
                                  });
    return;
  }
  send(m, lock_frame(m, true), [self, i](std::string_view reply, const LinkError* error) {
    self->on_locked(i, reply, error);
  });
  if (runs_now) {
    send(m, run_frame(m.part.commands, true),
         [self, i](std::string_view reply, const LinkError* error) {
           const std::string text = error ? error->text() : std::string();
           self->on_last_run(i, reply, error ? &text : nullptr);
         });
  }
  if (m.link) m.link->flush();
}

void TxnSession::on_locked(size_t i, std::string_view reply, const LinkError* error,
                           bool ran_with_it) {
  if (ended_) return;
  Member& m = *members_[i];
  const bool runs_now = ran_with_it || (ordered_ && execute_ && i + 1 == members_.size());
  if (error == nullptr && reply == kTxnLocked) {
    m.state = Member::kLocked;
    if (!runs_now) return lock_from(i + 1);
    if (m.self) {
      m.reply = cluster_.txn_host_->run_here(client_id_, m.part.commands, resp_);
      cluster_.txn_host_->release_here(client_id_);
      m.state = Member::kRan;
      commit_rest();
    }
    return;  // a peer's RUN answers next
  }
  m.state = Member::kIdle;
  if (error != nullptr) {
    if (runs_now && !m.self && error->sent) {
      // Its LOCK and RUN went out together and the link failed: the part may have run.
      m.state = Member::kUnknown;
      m.failure = error->text();
      return abort(TxnOutcome::kIncomplete, {});
    }
    return abort(TxnOutcome::kAborted, error->text());
  }
  if (reply == kTxnWatched) return abort(TxnOutcome::kWatched, {});
  // A waiting LOCK whose wait ran out answers BUSY only with nothing left to wait.
  if (reply == kTxnBusy) {
    return abort(TxnOutcome::kAborted,
                 "TRYAGAIN keys locked by another transaction on " + m.address);
  }
  abort(TxnOutcome::kAborted, error_text(reply));
}

void TxnSession::on_last_run(size_t i, std::string_view reply, const std::string* error) {
  // After a failed LOCK the RUN was refused (or failed with the link): the abort said it all.
  if (ended_) return;
  Member& m = *members_[i];
  if (error != nullptr) {
    m.state = Member::kUnknown;
    m.failure = *error;
    return abort(TxnOutcome::kIncomplete, {});
  }
  if (!reply.empty() && reply[0] == '-') {
    // Refused after its LOCK (the ring moved there, a script is busy): nothing anywhere ran.
    m.state = Member::kLocked;
    return abort(TxnOutcome::kAborted, error_text(reply));
  }
  m.state = Member::kRan;
  m.reply.assign(reply);
  commit_rest();
}

void TxnSession::commit_rest() {
  std::vector<size_t> pending;
  for (size_t j = 0; j < members_.size(); ++j) {
    if (members_[j]->state == Member::kLocked) pending.push_back(j);
  }
  running_ = pending.size();
  if (running_ == 0) return part_ran(members_.size(), {}, nullptr);
  auto self = shared_from_this();
  for (size_t j : pending) {
    Member& m = *members_[j];
    if (m.self) {
      const std::string reply = cluster_.txn_host_->run_here(client_id_, m.part.commands, resp_);
      cluster_.txn_host_->release_here(client_id_);
      part_ran(j, reply, nullptr);
      continue;
    }
    send(m, run_frame(m.part.commands, true),
         [self, j](std::string_view reply, const LinkError* error) {
           const std::string text = error ? error->text() : std::string();
           self->part_ran(j, reply, error ? &text : nullptr);
         });
    if (m.link) m.link->flush();
  }
}

void TxnSession::part_ran(size_t j, std::string_view reply, const std::string* error) {
  if (ended_) return;
  if (j < members_.size()) {
    Member& m = *members_[j];
    if (error != nullptr) {
      m.state = Member::kUnknown;
      m.failure = *error;
    } else if (!reply.empty() && reply[0] == '-') {
      m.state = Member::kNotApplied;
      m.failure = error_text(reply);
    } else {
      m.state = Member::kRan;
      m.reply.assign(reply);
    }
    if (--running_ > 0) return;
  }
  bool all = true;
  for (auto& m : members_) all = all && m->state == Member::kRan;
  if (!all) return abort(TxnOutcome::kIncomplete, {});
  TxnOutcome outcome{TxnOutcome::kCommitted, {}, {}};
  outcome.replies.resize(members_.size());
  for (auto& m : members_) outcome.replies[m->given] = std::move(m->reply);
  end(std::move(outcome));
}

void TxnSession::run(size_t part, std::vector<std::vector<std::string>> commands, bool release,
                     TxnRunDone done) {
  Member& m = *members_[order_[part]];
  if (m.self) {
    const std::string reply = cluster_.txn_host_->run_here(client_id_, commands, resp_);
    if (release) {
      cluster_.txn_host_->release_here(client_id_);
      m.state = Member::kRan;
    }
    done(reply, nullptr);
    return;
  }
  auto self = shared_from_this();
  Member* mp = &m;
  send(m, run_frame(commands, release),
       [self, mp, release, done = std::move(done)](std::string_view reply, const LinkError* error) {
         if (error != nullptr) {
           mp->state = Member::kUnknown;
           mp->failure = error->text();
           const std::string text = error->text();
           return done({}, &text);
         }
         if (release) mp->state = reply.empty() || reply[0] != '-' ? Member::kRan : Member::kIdle;
         done(reply, nullptr);
       });
  if (m.link) m.link->flush();
}

void TxnSession::abort(TxnOutcome::Kind kind, std::string error) {
  if (kind == TxnOutcome::kIncomplete) error = incomplete_error();
  end(TxnOutcome{kind, {}, std::move(error)});
}

std::string TxnSession::incomplete_error() const {
  std::string applied, not_applied, unknown;
  auto add = [](std::string& list, const std::string& text) {
    list += (list.empty() ? "" : ", ") + text;
  };
  for (auto& mp : members_) {
    Member& m = *mp;
    switch (m.state) {
      case Member::kRan:
        add(applied, m.address);
        break;
      case Member::kUnknown:
        add(unknown, m.address + " (" + m.failure + ")");
        break;
      case Member::kNotApplied:
        add(not_applied, m.address + " (" + m.failure + ")");
        break;
      default:
        break;
    }
  }
  std::string error = "ERR cross-node transaction incomplete: applied on " +
                      (applied.empty() ? std::string("no node") : applied);
  if (!unknown.empty()) error += "; may have been applied on " + unknown;
  if (!not_applied.empty()) error += "; not applied on " + not_applied;
  bool rest = false;
  for (auto& m : members_) rest = rest || m->state == Member::kLocked || m->state == Member::kIdle;
  if (rest) error += "; not applied elsewhere";
  return error;
}

void TxnSession::end(TxnOutcome outcome) {
  if (ended_) return;
  ended_ = true;
  finish();
  TxnDone done = std::move(done_);
  if (done) done(std::move(outcome));
}

void TxnSession::finish() {
  ended_ = true;
  for (auto& mp : members_) {
    Member& m = *mp;
    if (m.self) {
      if (m.state == Member::kLocked || m.state == Member::kLocking) {
        cluster_.txn_host_->release_here(client_id_);
      }
      continue;
    }
    if (!m.link) continue;
    // A part that ran dropped what it held there (its RUN released); one whose RUN is
    // unanswered keeps its link until the link fails or closes (the peer then releases by
    // itself); the others release what a LOCK took and the WATCHes left there.
    const bool unknown = m.state == Member::kUnknown;
    if (m.state != Member::kRan && !unknown && cluster_.started_) release_frame(m, true);
    cluster_.give_back_transaction_link(*m.peer, std::move(m.link), !unknown);
  }
}

bool split_array(std::string_view reply, std::vector<std::string_view>& elements) {
  elements.clear();
  if (reply.size() < 4 || reply[0] != '*') return false;
  const size_t eol = reply.find("\r\n");
  if (eol == std::string_view::npos) return false;
  int64_t n = 0;
  for (size_t i = 1; i < eol; ++i) {
    if (reply[i] < '0' || reply[i] > '9') return false;
    n = n * 10 + (reply[i] - '0');
  }
  size_t pos = eol + 2;
  for (int64_t i = 0; i < n; ++i) {
    protocol::ReplyScanner scanner;
    const auto r = scanner.scan(std::span<const char>(reply.data() + pos, reply.size() - pos));
    if (r.status != protocol::ReplyScanner::Status::kComplete) return false;
    elements.push_back(reply.substr(pos, r.length));
    pos += r.length;
  }
  return pos == reply.size();
}

std::string interleave_replies(const std::vector<std::string>& part_replies,
                               const std::vector<std::vector<size_t>>& positions, size_t total,
                               const FragmentMerge& merge) {
  // Each position's replies, in part order: its run of `flat`, from first[position].
  if (part_replies.size() > positions.size()) return {};
  std::vector<size_t> first(total + 1, 0);
  for (size_t p = 0; p < part_replies.size(); ++p) {
    for (size_t q : positions[p]) {
      if (q >= total) return {};
      first[q + 1]++;
    }
  }
  for (size_t q = 0; q < total; ++q) first[q + 1] += first[q];
  std::vector<std::pair<size_t, std::string_view>> flat(first[total]);
  std::vector<size_t> filled(first.begin(), first.end() - 1);
  std::vector<std::string_view> elements;
  for (size_t p = 0; p < part_replies.size(); ++p) {
    if (!split_array(part_replies[p], elements) || elements.size() != positions[p].size()) {
      return {};
    }
    for (size_t i = 0; i < elements.size(); ++i) {
      flat[filled[positions[p][i]]++] = {p, elements[i]};
    }
  }
  std::string out = "*" + std::to_string(total) + "\r\n";
  for (size_t q = 0; q < total; ++q) {
    const size_t n = first[q + 1] - first[q];
    if (n == 1) {
      out.append(flat[first[q]].second);
    } else if (n == 0 || !merge) {
      return {};  // a position no part answers, or a split one without a merge
    } else {
      out.append(merge(q, std::span(flat).subspan(first[q], n)));
    }
  }
  return out;
}

}  // namespace ringkv::cluster
