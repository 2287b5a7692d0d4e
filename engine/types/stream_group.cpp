// Consumer groups (see stream_group.h).
#include "engine/types/stream_group.h"

namespace ringkv::engine {

namespace {

// Rough heap costs of the containers' nodes (std::map / std::set nodes with their payloads).
constexpr size_t kNackCost = 96;
constexpr size_t kConsumerCost = 160;

}  // namespace

StreamConsumer* StreamGroup::consumer(std::string_view name) const {
  auto it = consumers_.find(name);
  return it == consumers_.end() ? nullptr : it->second.get();
}

StreamConsumer* StreamGroup::get_or_create_consumer(std::string_view name, int64_t now,
                                                    bool* created) {
  auto it = consumers_.find(name);
  if (created != nullptr) *created = it == consumers_.end();
  if (it != consumers_.end()) return it->second.get();
  auto c = std::make_unique<StreamConsumer>();
  c->name = std::string(name);
  c->seen_time = now;
  name_bytes_ += name.size();
  StreamConsumer* raw = c.get();
  consumers_.emplace(std::string(name), std::move(c));
  return raw;
}

int64_t StreamGroup::delete_consumer(std::string_view name) {
  auto it = consumers_.find(name);
  if (it == consumers_.end()) return -1;
  const int64_t pending = static_cast<int64_t>(it->second->pending.size());
  for (StreamID id : it->second->pending) pel_.erase(id);
  name_bytes_ -= it->second->name.size();
  consumers_.erase(it);
  return pending;
}

StreamNack* StreamGroup::nack(StreamID id) {
  auto it = pel_.find(id);
  return it == pel_.end() ? nullptr : &it->second;
}

void StreamGroup::set_pending(StreamID id, StreamConsumer* owner, int64_t time, uint64_t count) {
  StreamNack& n = pel_[id];
  if (n.consumer != nullptr && n.consumer != owner) n.consumer->pending.erase(id);
  n.consumer = owner;
  n.delivery_time = time;
  n.delivery_count = count;
  owner->pending.insert(id);
}

bool StreamGroup::acknowledge(StreamID id) {
  auto it = pel_.find(id);
  if (it == pel_.end()) return false;
  it->second.consumer->pending.erase(id);
  pel_.erase(it);
  return true;
}

size_t StreamGroup::memory() const {
  // Each pending entry sits in the group's PEL and in its owner's.
  return sizeof(StreamGroup) + pel_.size() * kNackCost + consumers_.size() * kConsumerCost +
         2 * name_bytes_;
}

std::unique_ptr<StreamGroup> StreamGroup::clone() const {
  auto copy = std::make_unique<StreamGroup>(last_id, entries_read);
  for (const auto& [name, c] : consumers_) {
    StreamConsumer* dup = copy->get_or_create_consumer(name, c->seen_time, nullptr);
    for (StreamID id : c->pending) {
      const StreamNack& n = pel_.at(id);
      copy->set_pending(id, dup, n.delivery_time, n.delivery_count);
    }
  }
  return copy;
}

}  // namespace ringkv::engine
