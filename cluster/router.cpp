// Router: the routing decision for one command.
#include "cluster/router.h"

#include <algorithm>

namespace ringkv::cluster {

Route Router::route(const engine::CommandSpec& spec, std::span<const std::string_view> argv) const {
  Route r;
  // Cluster-wide commands (PUBLISH, PUBSUB) need every node's subscribers, as keyspace-wide
  // ones need every node's keys.
  if (spec.flags & (engine::kKeyspaceWide | engine::kClusterWide)) {
    r.kind = RouteKind::kFanOut;
    return r;
  }
  if (spec.find_keys != nullptr) return route_keys(engine::key_positions(spec, argv), argv);
  if (spec.first_key() <= 0 || static_cast<size_t>(spec.first_key()) >= argv.size()) return r;
  const size_t argc = argv.size();
  const size_t first = static_cast<size_t>(spec.first_key());
  const size_t last = spec.last_key() < 0 ? argc - static_cast<size_t>(-spec.last_key())
                                          : static_cast<size_t>(spec.last_key());
  const size_t step = spec.key_step() > 0 ? static_cast<size_t>(spec.key_step()) : 1;
  // Malformed key layouts (MSET with a dangling key) run where they are: the handler replies
  // with the error.
  if (last < first || last >= argc || (step > 1 && (argc - first) % step != 0)) return r;

  const size_t owner = ring_->owner_index(argv[first]);
  bool single = true;
  for (size_t i = first + step; i <= last; i += step) {
    if (ring_->owner_index(argv[i]) != owner) {
      single = false;
      break;
    }
  }
  if (single) {
    if (owner != self_ && !(spec.flags & engine::kSubscribesHere)) r.kind = RouteKind::kRemote;
    r.node = owner;
    return r;
  }
  if (!(spec.flags & engine::kSplittable)) {
    r.kind = RouteKind::kCrossSlot;
    return r;
  }
  r.kind = RouteKind::kSplit;
  r.key_step = step;
  for (size_t i = first; i <= last; i += step) {
    size_t node = ring_->owner_index(argv[i]);
    auto it = std::find_if(r.fragments.begin(), r.fragments.end(),
                           [&](const Fragment& f) { return f.node == node; });
    if (it == r.fragments.end()) {
      r.fragments.push_back(Fragment{node, {}});
      it = r.fragments.end() - 1;
    }
    it->groups.push_back(i);
  }
  return r;
}

Route Router::route_keys(const std::vector<size_t>& keys,
                         std::span<const std::string_view> argv) const {
  Route r;
  if (keys.empty()) return r;
  const size_t owner = ring_->owner_index(argv[keys[0]]);
  for (size_t k : keys) {
    if (ring_->owner_index(argv[k]) != owner) {
      // Movable-key commands are never split: they are atomic over their keys.
      r.kind = RouteKind::kCrossSlot;
      return r;
    }
  }
  if (owner != self_) r.kind = RouteKind::kRemote;
  r.node = owner;
  return r;
}

std::vector<std::string> fragment_command(std::span<const std::string_view> argv,
                                          const Route& route, const Fragment& fragment) {
  std::vector<std::string> command{std::string(argv[0])};
  for (size_t g : fragment.groups) {
    for (size_t k = 0; k < route.key_step; ++k) command.emplace_back(argv[g + k]);
  }
  return command;
}

std::vector<size_t> fragment_positions(const engine::CommandSpec& spec, const Route& route,
                                       const Fragment& fragment) {
  const size_t first = static_cast<size_t>(spec.first_key());
  std::vector<size_t> positions;
  positions.reserve(fragment.groups.size());
  for (size_t g : fragment.groups) positions.push_back((g - first) / route.key_step);
  return positions;
}

}  // namespace ringkv::cluster
