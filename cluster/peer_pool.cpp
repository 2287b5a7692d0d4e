// PeerPool: the relay links and the health link to one peer.
#include "cluster/peer_pool.h"

namespace ringkv::cluster {

PeerLink& PeerPool::link_for(uint64_t client_id) {
  if (links_.empty()) links_.resize(size_);
  auto& link = links_[client_id % size_];
  if (!link) link = make_link_(relay_);
  // A link that failed while the peer was hung would answer its clients with that failure until
  // its backoff ends, though other links to the peer have been answered since.
  if (link->state() == PeerLink::State::kBackoff && answered_since(link->failed_ms())) {
    link->reset_backoff();
  }
  return *link;
}

bool PeerPool::answered_since(uint64_t ms) const {
  if (health_ && health_->last_answer_ms() > ms) return true;
  for (const auto& l : links_) {
    if (l && l->last_answer_ms() > ms) return true;
  }
  return false;
}

PeerLink& PeerPool::health(LinkOptions options) {
  if (!health_) health_ = make_link_(options);
  return *health_;
}

void PeerPool::send_on_open_links(std::string_view frame) {
  for (auto& l : links_) {
    if (l && l->has_connection()) l->send(frame, [](std::string_view, const LinkError*) {});
  }
}

void PeerPool::flush() {
  for (auto& l : links_) {
    if (l && l->needs_flush()) l->flush();
  }
  if (health_ && health_->needs_flush()) health_->flush();
}

void PeerPool::check_timeouts(uint64_t now_ms) {
  for (auto& l : links_) {
    if (l) l->check_timeouts(now_ms);
  }
  if (health_) health_->check_timeouts(now_ms);
}

void PeerPool::reset_backoff() {
  for (auto& l : links_) {
    if (l) l->reset_backoff();
  }
}

void PeerPool::close(LinkErrorKind kind) {
  if (health_) health_->close(kind);
  health_.reset();
  // Requests still waiting get an answer, so their clients can be flushed and closed.
  for (auto& l : links_) {
    if (l) l->close(kind);
  }
  links_.clear();
}

void PeerPool::fail_relays(LinkErrorKind kind) {
  for (auto& l : links_) {
    if (l) l->close(kind);
  }
}

std::string PeerPool::state() const {
  std::string state = "idle";
  for (const auto& l : links_) {
    if (!l) continue;
    if (l->state() == PeerLink::State::kReady) return "connected";
    if (l->state() == PeerLink::State::kBackoff) state = "broken:" + l->last_error().reason();
    const bool opening =
        l->state() == PeerLink::State::kConnecting || l->state() == PeerLink::State::kHandshaking;
    if (opening && state == "idle") state = "connecting";
  }
  for (char& c : state) {
    if (c == ' ') c = '_';
  }
  return state;
}

PoolTotals PeerPool::totals() const {
  PoolTotals t;
  for (const auto& l : links_) {
    if (!l) continue;
    t.requests += l->stats().requests;
    t.errors += l->stats().errors;
    t.replies += l->stats().replies;
    t.reply_usec += l->stats().reply_usec;
    t.in_flight += l->in_flight();
  }
  return t;
}

}  // namespace ringkv::cluster
