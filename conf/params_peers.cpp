// The parameter rows' parsing of cluster addresses: `self`'s "host:port" and the peer list.
#include <algorithm>
#include <cctype>
#include <string>

#include "common/numbers.h"
#include "conf/param_rows.h"

namespace ringkv::conf::detail {
namespace {

// "host:port" with a port in 1..65535; an IPv6 host is written in brackets ("[::1]:7001").
Reason check_address(std::string_view text) {
  Reason bad = "must be \"host:port\" with a port between 1 and 65535, got " + quote_text(text);
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return bad;
  std::string_view host = text.substr(0, colon);
  bool bracketed = host.size() > 2 && host.front() == '[' && host.back() == ']';
  if (!bracketed && host.find(':') != std::string_view::npos) return bad;
  for (char c : host) {
    if (std::isspace(static_cast<unsigned char>(c)) || c == ',' || c == '=') return bad;
  }
  auto port = common::parse_integer(text.substr(colon + 1));
  if (!port || *port < 1 || *port > 65535) return bad;
  return {};
}

Reason check_weight(int64_t weight, std::string_view got) {
  if (weight < 1 || weight > kMaxWeight) return range_reason(1, kMaxWeight, got);
  return {};
}

// One peer written as "host:port" or "host:port=weight".
Reason parse_peer(std::string_view text, PeerOptions& peer) {
  size_t eq = text.find('=');
  peer.addr = std::string(text.substr(0, eq));
  peer.weight = 1;
  if (Reason why = check_address(peer.addr); !why.empty()) return why;
  if (eq != std::string_view::npos) {
    std::string_view w = text.substr(eq + 1);
    auto weight = common::parse_integer(w);
    if (!weight) return "weight: expected an integer, got " + quote_text(w);
    if (Reason why = check_weight(*weight, w); !why.empty()) return "weight: " + why;
    peer.weight = *weight;
  }
  return {};
}

Reason check_unique(const std::vector<PeerOptions>& peers) {
  for (size_t i = 0; i < peers.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (peers[i].addr == peers[j].addr) return "lists " + peers[i].addr + " twice";
    }
  }
  return {};
}

Reason peer_from_toml(const toml::node& node, PeerOptions& peer) {
  if (node.is_string()) return parse_peer(node.as_string()->get(), peer);
  const toml::table* table = node.as_table();
  if (table == nullptr) return "expected a string or a table, got " + type_name(node);
  peer = PeerOptions{};
  for (const auto& [key, value] : *table) {
    if (key.str() != "addr" && key.str() != "weight") {
      return "." + std::string(key.str()) + ": unknown key";
    }
  }
  const toml::node* addr = table->get("addr");
  if (addr == nullptr) return ".addr: missing";
  if (!addr->is_string()) return ".addr: expected a string, got " + type_name(*addr);
  peer.addr = addr->as_string()->get();
  if (Reason why = check_address(peer.addr); !why.empty()) return ".addr: " + why;
  if (const toml::node* weight = table->get("weight")) {
    if (!weight->is_integer()) return ".weight: expected an integer, got " + type_name(*weight);
    int64_t w = weight->as_integer()->get();
    if (Reason why = check_weight(w, std::to_string(w)); !why.empty()) return ".weight: " + why;
    peer.weight = w;
  }
  return {};
}

// The other nodes: a list of "host:port" strings or {addr = "host:port", weight = N} tables in
// TOML, a comma-separated list of "host:port[=weight]" on the command line.
}  // namespace

Row peers_row(const Head& h) {
  Row row = make_row(h);
  row.repeatable = true;
  row.from_text = [](Config& c, std::string_view text) -> Reason {
    std::vector<PeerOptions> peers;
    while (!trim(text).empty()) {
      size_t comma = text.find(',');
      std::string_view item = trim(text.substr(0, comma));
      text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
      PeerOptions peer;
      if (Reason why = parse_peer(item, peer); !why.empty()) return why;
      peers.push_back(std::move(peer));
    }
    if (Reason why = check_unique(peers); !why.empty()) return why;
    c.cluster.peers = std::move(peers);
    return {};
  };
  row.from_toml = [](Config& c, const toml::node& node) -> Reason {
    const toml::array* array = node.as_array();
    if (array == nullptr) return "expected an array, got " + type_name(node);
    std::vector<PeerOptions> peers;
    for (size_t i = 0; i < array->size(); ++i) {
      PeerOptions peer;
      if (Reason why = peer_from_toml(*array->get(i), peer); !why.empty()) {
        std::string where = "[" + std::to_string(i) + "]";
        return where + (why.front() == '.' ? why : ": " + why);
      }
      peers.push_back(std::move(peer));
    }
    if (Reason why = check_unique(peers); !why.empty()) return why;
    c.cluster.peers = std::move(peers);
    return {};
  };
  row.to_toml = [](const Config& c) {
    bool weighted = std::any_of(c.cluster.peers.begin(), c.cluster.peers.end(),
                                [](const PeerOptions& p) { return p.weight != 1; });
    std::string out = "[";
    for (const PeerOptions& peer : c.cluster.peers) {
      if (out.size() > 1) out += ", ";
      if (weighted) {
        out += "{ addr = " + toml_quote(peer.addr) + ", weight = " + std::to_string(peer.weight) +
               " }";
      } else {
        out += toml_quote(peer.addr);
      }
    }
    return out + "]";
  };
  return row;
}

Reason check_self(std::string_view text) { return text.empty() ? Reason{} : check_address(text); }

}  // namespace ringkv::conf::detail
