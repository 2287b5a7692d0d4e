// LinkError: why a peer link could not carry a request, as a value — what happened (a kind the
// code can act on), to which peer, and the detail the system or the peer gave. It is rendered as
// the Redis-style error text clients see in one place, text().
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>

namespace ringkv::cluster {

enum class LinkErrorKind : uint8_t {
  kUnreachable,     // connecting or I/O failed; detail is the system's text ("connection refused")
  kClosed,          // the peer closed the connection
  kTimeout,         // no reply within request-timeout (or the link is wedged)
  kConnectTimeout,  // connecting took longer than connect-timeout
  kHandshakeTimeout,  // the peer handshake took longer than connect-timeout
  kProtocol,          // the peer sent a malformed or unexpected reply; detail says which
  kRefused,           // the peer refused the link in the handshake; detail says why
  kDown,              // health checks marked the peer down
  kShutdown,          // this node is shutting down
  kAbandoned,         // the client that sent the request went away
};

struct LinkError {
  LinkErrorKind kind;
  std::string address;  // the peer, HOST:PORT
  std::string detail;   // kUnreachable, kProtocol, kRefused: what was said; else empty
  // The request had been written to the peer when the link failed it: it may have run there.
  bool sent = false;

  // The reason as logs, CLUSTER NODES and the error text give it: "connection refused",
  // "timeout", "down", "link refused (...)"...
  std::string reason() const {
    // By kind, in the enum's order; empty where the detail is the reason.
    static constexpr std::string_view kReasons[] = {"",
                                                    "connection closed",
                                                    "timeout",
                                                    "connect timeout",
                                                    "handshake timeout",
                                                    "",
                                                    "",
                                                    "down",
                                                    "node shutting down",
                                                    "client closed"};
    static_assert(std::size(kReasons) == static_cast<size_t>(LinkErrorKind::kAbandoned) + 1);
    if (kind == LinkErrorKind::kRefused) return "link refused (" + detail + ")";
    const std::string_view fixed = kReasons[static_cast<size_t>(kind)];
    return fixed.empty() ? detail : std::string(fixed);
  }

  // The error reply text: "ERR peer HOST:PORT unavailable: <reason>".
  std::string text() const { return "ERR peer " + address + " unavailable: " + reason(); }
};

}  // namespace ringkv::cluster
