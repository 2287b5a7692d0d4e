// ringkv-ring: prints how a member list shares the ring — arc and key shares per node with a bar
// chart, balance figures, and which keys move when a node is added or removed — so the hash
// scheme, replicas and weights of a cluster can be chosen from measurements.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "hashring/hash_ring.h"
#include "hashring/ring_stats.h"

namespace {

using ringkv::hashring::HashRing;
using ringkv::hashring::Member;

struct Options {
  std::vector<std::string> nodes;
  int count = 0;
  std::string first = "127.0.0.1:7001";
  uint32_t replicas = HashRing::kDefaultReplicas;
  std::string hash = "balanced";
  size_t keys = 100000;
  std::string add;
  std::string remove;
  bool csv = false;
  int bar_width = 40;
};

// Per-node figures of one ring, indexed like ring.nodes().
struct NodeFigures {
  std::vector<double> arc;
  std::vector<double> share;
  std::vector<uint64_t> keys;
  double lookup_ns = 0;
};

NodeFigures measure(const HashRing& ring, const std::vector<std::string>& keys) {
  NodeFigures f;
  f.arc = ringkv::hashring::arc_shares(ring);
  f.share = ringkv::hashring::effective_shares(ring);
  const auto start = std::chrono::steady_clock::now();
  f.keys = ringkv::hashring::keys_per_node(ring, keys);
  const std::chrono::duration<double, std::nano> took = std::chrono::steady_clock::now() - start;
  f.lookup_ns = keys.empty() ? 0 : took.count() / static_cast<double>(keys.size());
  return f;
}

// "host:port" with the port increased by `offset`; nullopt if `first` has no numeric port.
std::optional<std::string> nth_address(const std::string& first, int offset) {
  const size_t colon = first.rfind(':');
  if (colon == std::string::npos) return std::nullopt;
  try {
    const int port = std::stoi(first.substr(colon + 1));
    return first.substr(0, colon + 1) + std::to_string(port + offset);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::string bar(double value, double max, int width) {
  static const char* const kEighths[] = {"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"};
  const int eighths = max > 0 ? static_cast<int>(value / max * width * 8 + 0.5) : 0;
  std::string out;
  for (int i = 0; i < eighths / 8; ++i) out += "█";
  return out + kEighths[eighths % 8];
}

std::vector<double> as_doubles(const std::vector<uint64_t>& v) { return {v.begin(), v.end()}; }

void print_balance(const char* label, const HashRing& ring, const std::vector<double>& values,
                   double scale, const char* unit) {
  const auto b = ringkv::hashring::balance_of(ring, values);
  std::printf("  %-6s busiest/mean %.3f (%s)  mean %.4g%s  stddev %.4g%s  (%.1f%% of mean)\n",
              label, b.busiest_over_mean, std::string(ring.nodes()[b.busiest].address).c_str(),
              b.mean * scale, unit, b.stddev * scale, unit,
              b.mean > 0 ? 100 * b.stddev / b.mean : 0);
}

void print_ring(const HashRing& ring, const NodeFigures& f, const Options& o, const char* title) {
  std::printf("%s: %zu nodes, hash %s (%u probe%s per key), %u replicas, %zu virtual nodes\n",
              title, ring.size(), ring.scheme().name.c_str(), ring.scheme().probes,
              ring.scheme().probes == 1 ? "" : "s", ring.replicas(), ring.points().size());
  std::printf("fingerprint %016llx\n\n", static_cast<unsigned long long>(ring.fingerprint()));
  std::printf("%-22s %6s %7s %7s %7s %9s %7s\n", "node", "weight", "vnodes", "arc%", "share%",
              "keys", "keys%");
  const double max_keys = static_cast<double>(*std::max_element(f.keys.begin(), f.keys.end()));
  for (size_t n = 0; n < ring.size(); ++n) {
    const Member& m = ring.nodes()[n];
    std::printf("%-22s %6u %7llu %7.2f %7.2f %9llu %7.2f %s\n", m.address.c_str(), m.weight,
                static_cast<unsigned long long>(m.weight) * ring.replicas(), 100 * f.arc[n],
                100 * f.share[n], static_cast<unsigned long long>(f.keys[n]),
                o.keys ? 100.0 * f.keys[n] / o.keys : 0.0,
                bar(static_cast<double>(f.keys[n]), max_keys, o.bar_width).c_str());
  }
  std::printf("\nbalance (weight-aware):\n");
  print_balance("arc", ring, f.arc, 100, "%");
  print_balance("share", ring, f.share, 100, "%");
  if (o.keys) print_balance("keys", ring, as_doubles(f.keys), 1, "");
  std::printf("lookup: %.0f ns per key (%zu keys)\n", f.lookup_ns, o.keys);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ringkv-ring: share of the hash ring per node, key spread and key movement"};
  Options o;
  app.add_option("--nodes", o.nodes, "Members host:port[=weight], comma-separated")->delimiter(',');
  app.add_option("--count", o.count, "Generate this many members with consecutive ports")
      ->check(CLI::Range(1, 100000));
  app.add_option("--first", o.first, "First generated member for --count")->capture_default_str();
  app.add_option("--replicas", o.replicas, "Virtual nodes per unit of weight")
      ->capture_default_str()
      ->check(CLI::Range(1u, 100000u));
  app.add_option("--hash", o.hash, "Hash scheme")
      ->capture_default_str()
      ->check(CLI::IsMember({"crc32", "balanced"}));
  app.add_option("--keys", o.keys, "Number of sample keys key:0, key:1, ...")
      ->capture_default_str();
  app.add_option("--add", o.add, "Show key movement when this member host:port[=weight] joins");
  app.add_option("--remove", o.remove, "Show key movement when this member leaves");
  app.add_flag("--csv", o.csv, "Print one CSV row per node instead of the report");
  app.add_option("--bar-width", o.bar_width, "Width of the longest bar")
      ->capture_default_str()
      ->check(CLI::Range(1, 200));
  CLI11_PARSE(app, argc, argv);

  std::vector<Member> list;
  for (const std::string& text : o.nodes) {
    const auto m = ringkv::hashring::parse_member(text);
    if (!m) {
      std::fprintf(stderr, "ringkv-ring: bad member '%s' (expected host:port[=weight])\n",
                   text.c_str());
      return 2;
    }
    list.push_back(*m);
  }
  for (int i = 0; i < o.count; ++i) {
    const auto address = nth_address(o.first, i);
    if (!address) {
      std::fprintf(stderr, "ringkv-ring: --first '%s' has no numeric port\n", o.first.c_str());
      return 2;
    }
    list.push_back(Member{*address, 1});
  }
  if (list.empty()) {
    std::fprintf(stderr, "ringkv-ring: no members (use --nodes or --count)\n");
    return 2;
  }

  HashRing before(*ringkv::hashring::scheme_named(o.hash), o.replicas);
  before.set_members(list);
  HashRing after = before;
  std::vector<std::string> changed;
  if (!o.add.empty()) {
    const auto m = ringkv::hashring::parse_member(o.add);
    if (!m || !after.add_node(m->address, m->weight)) {
      std::fprintf(stderr, "ringkv-ring: cannot add '%s' (malformed or already a member)\n",
                   o.add.c_str());
      return 2;
    }
    changed.push_back(m->address);
  }
  if (!o.remove.empty()) {
    if (!after.remove_node(o.remove) || after.empty()) {
      std::fprintf(stderr, "ringkv-ring: cannot remove '%s' (not a member, or the last one)\n",
                   o.remove.c_str());
      return 2;
    }
    changed.push_back(o.remove);
  }

  const auto keys = ringkv::hashring::sample_keys(o.keys);
  const NodeFigures f = measure(before, keys);
  std::optional<NodeFigures> g;
  std::optional<ringkv::hashring::Movement> moved;
  if (!changed.empty()) {
    g = measure(after, keys);
    moved = ringkv::hashring::movement(before, after, keys);
  }

  if (o.csv) {
    std::printf("node,weight,virtual_nodes,arc_share,effective_share,keys,key_share%s\n",
                g ? ",keys_after,moved_in,moved_out" : "");
    // Rows for every node of either ring, so an added node appears too.
    std::vector<std::string> names;
    for (const Member& m : before.nodes()) names.push_back(m.address);
    for (const Member& m : after.nodes()) names.push_back(m.address);
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    for (const std::string& name : names) {
      const size_t b = before.index_of(name);
      const size_t a = after.index_of(name);
      const Member& m = b != HashRing::kNoNode ? before.nodes()[b] : after.nodes()[a];
      std::printf("%s,%u,%llu", name.c_str(), m.weight,
                  static_cast<unsigned long long>(m.weight) * before.replicas());
      if (b != HashRing::kNoNode) {
        std::printf(",%.6f,%.6f,%llu,%.6f", f.arc[b], f.share[b],
                    static_cast<unsigned long long>(f.keys[b]),
                    o.keys ? static_cast<double>(f.keys[b]) / o.keys : 0.0);
      } else {
        std::printf(",0,0,0,0");
      }
      if (g) {
        uint64_t in = 0;
        uint64_t out = 0;
        for (const auto& t : moved->transfers) {
          if (t.to == name) in += t.keys;
          if (t.from == name) out += t.keys;
        }
        std::printf(",%llu,%llu,%llu",
                    static_cast<unsigned long long>(a != HashRing::kNoNode ? g->keys[a] : 0),
                    static_cast<unsigned long long>(in), static_cast<unsigned long long>(out));
      }
      std::printf("\n");
    }
    return 0;
  }

  print_ring(before, f, o, "ring");
  if (g) {
    std::printf("\n");
    print_ring(after, *g, o, o.remove.empty() ? "after adding" : "after the change");
    uint64_t elsewhere = 0;
    for (const auto& t : moved->transfers) {
      const bool involved = std::find(changed.begin(), changed.end(), t.from) != changed.end() ||
                            std::find(changed.begin(), changed.end(), t.to) != changed.end();
      if (!involved) elsewhere += t.keys;
    }
    std::printf("\nmovement: %llu of %llu keys moved (%.2f%%)\n",
                static_cast<unsigned long long>(moved->moved),
                static_cast<unsigned long long>(moved->total),
                moved->total ? 100.0 * moved->moved / moved->total : 0.0);
    // Consistent hashing moves only the changed nodes' share: what joins takes its share of the
    // new ring, what leaves gives up its share of the old one.
    double expected = 0;
    for (const std::string& node : changed) {
      const size_t a = after.index_of(node);
      const size_t b = before.index_of(node);
      expected += a != HashRing::kNoNode ? g->share[a] : f.share[b];
    }
    // Keys passing from a removed to an added node count in both shares, hence "at most".
    std::printf("  expected from the changed nodes' shares: %s%.2f%%\n",
                changed.size() > 1 ? "at most " : "", 100 * expected);
    for (const auto& t : moved->transfers) {
      std::printf("  %-22s -> %-22s %9llu\n", t.from.c_str(), t.to.c_str(),
                  static_cast<unsigned long long>(t.keys));
    }
    std::printf("  moved between unchanged nodes: %llu (consistent hashing promises 0)\n",
                static_cast<unsigned long long>(elsewhere));
  }
  return 0;
}
