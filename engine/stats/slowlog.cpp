// The slow log's entries, stored and answered as Redis 7.0's slowlog.c does.
#include "engine/stats/slowlog.h"

#include <algorithm>

namespace ringkv::engine {
namespace {

// Redis's limits on what an entry keeps of a command.
constexpr size_t kMaxArgs = 32;
constexpr size_t kMaxArgBytes = 128;

}  // namespace

void SlowLog::push(std::span<const std::string_view> argv, int64_t duration_us, int64_t unix_time,
                   std::string_view peer, std::string_view name, int64_t max_len) {
  SlowLogEntry entry{next_id_++, unix_time, duration_us, {}, std::string(peer), std::string(name)};
  const size_t kept = std::min(argv.size(), kMaxArgs);
  for (size_t i = 0; i < kept; ++i) {
    if (kept != argv.size() && i == kept - 1) {
      // The last slot says how many arguments were left out.
      entry.args.push_back("... (" + std::to_string(argv.size() - kept + 1) + " more arguments)");
      break;
    }
    std::string_view arg = argv[i];
    if (arg.size() > kMaxArgBytes) {
      entry.args.push_back(std::string(arg.substr(0, kMaxArgBytes)) + "... (" +
                           std::to_string(arg.size() - kMaxArgBytes) + " more bytes)");
    } else {
      entry.args.emplace_back(arg);
    }
  }
  entries_.push_front(std::move(entry));
  while (!entries_.empty() && static_cast<int64_t>(entries_.size()) > std::max<int64_t>(0, max_len))
    entries_.pop_back();
}

void SlowLog::write(protocol::ReplyWriter& reply, int64_t count) const {
  const size_t n =
      count < 0 ? entries_.size() : std::min(entries_.size(), static_cast<size_t>(count));
  reply.array(n);
  for (size_t i = 0; i < n; ++i) {
    const SlowLogEntry& e = entries_[i];
    reply.array(6);
    reply.integer(e.id);
    reply.integer(e.unix_time);
    reply.integer(e.duration_us);
    reply.array(e.args.size());
    for (const std::string& arg : e.args) reply.bulk(arg);
    reply.bulk(e.peer);
    reply.bulk(e.name);
  }
}

}  // namespace ringkv::engine
