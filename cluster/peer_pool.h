// PeerPool: the long-lived links to one peer — a small pool of pipelined relay links shared by
// every client (a client always uses the same one, so the peer runs its requests in order) and a
// link of its own for health pings, so client load never delays them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cluster/link_error.h"
#include "cluster/peer_link.h"

namespace ringkv::cluster {

// Counters of a pool's relay links together.
struct PoolTotals {
  uint64_t requests = 0;
  uint64_t errors = 0;
  uint64_t in_flight = 0;
  uint64_t replies = 0;
  uint64_t reply_usec = 0;  // the replies' round trips added up
};

class PeerPool {
 public:
  // Opens a link to the peer with these options (the handshake included).
  using LinkFactory = std::function<std::unique_ptr<PeerLink>(LinkOptions)>;

  // `size` relay links (at least 1), opened on first use with `relay` options.
  PeerPool(size_t size, LinkOptions relay, LinkFactory make_link)
      : size_(size == 0 ? 1 : size), relay_(relay), make_link_(std::move(make_link)) {}

  // The relay link that carries this client's requests.
  PeerLink& link_for(uint64_t client_id);
  // The health link, opened with `options` when there is none.
  PeerLink& health(LinkOptions options);
  // Drops the health link (it is opened again by the next health()).
  void drop_health() { health_.reset(); }

  // Queues `frame` on each relay link that has a connection (open or opening), behind what it
  // carries; its reply is dropped. A link without one says what it must in its next handshake.
  void send_on_open_links(std::string_view frame);
  // Writes what every link queued in this loop iteration.
  void flush();
  // Fails requests past their deadline on every link.
  void check_timeouts(uint64_t now_ms);
  // Relay links waiting out a reconnect delay may connect at once (the peer answers again).
  void reset_backoff();
  // Closes every link, failing what they carry with `kind` (shutdown).
  void close(LinkErrorKind kind);
  // Fails what the relay links carry with `kind` and drops their connections (they open again
  // when next used); the health link is left alone.
  void fail_relays(LinkErrorKind kind);

  // "connected", "connecting", "idle" or "broken:<reason>" (spaces as '_') for the relay links.
  std::string state() const;
  PoolTotals totals() const;

 private:
  // Whether any link to the peer (the health link included) read a reply after loop time `ms`.
  bool answered_since(uint64_t ms) const;

  size_t size_;
  LinkOptions relay_;
  LinkFactory make_link_;
  std::vector<std::unique_ptr<PeerLink>> links_;  // opened on first use
  std::unique_ptr<PeerLink> health_;
};

}  // namespace ringkv::cluster
