// The keys a run of replication frames writes (see frame_keys.h).
#include "cluster/frame_keys.h"

#include <limits>

#include "cluster/peer_frame.h"
#include "common/numbers.h"
#include "engine/command.h"
#include "protocol/resp_parser.h"

namespace ringkv::cluster {
namespace {

// What one frame leaves: its keys appended to `keys`, and the open MULTI block's database in
// `block_db` (-1: no block open). False when the frame writes what no key names.
bool keys_of_frame(std::string_view bytes, int& block_db,
                   std::vector<std::pair<int, std::string>>& keys) {
  protocol::RespParser parser;
  std::vector<std::string_view> argv;
  if (parser.parse({bytes.data(), bytes.size()}, argv).status != protocol::ParseStatus::kComplete) {
    return false;
  }
  const engine::Result<PeerFrame> frame = parse_peer_frame(argv, std::numeric_limits<int>::max());
  if (!frame) return false;
  // SYNCED and DRAINED write nothing; FLUSH drops every key.
  if (frame->kind == PeerFrameKind::kReplication) {
    return !frame->args.empty() && !common::equals_ignore_case(frame->args[0], "flush");
  }
  std::string error;
  const engine::CommandSpec* spec = frame->kind == PeerFrameKind::kCommand
                                        ? engine::resolve_command(frame->args, error)
                                        : nullptr;
  if (spec == nullptr) return false;
  if (spec->name == "multi" || spec->name == "exec") {
    block_db = spec->name == "multi" ? 0 : -1;
    return true;
  }
  if (spec->name == "select") {
    const std::optional<int64_t> db =
        frame->args.size() == 2 ? common::parse_integer(frame->args[1]) : std::nullopt;
    if (!db || *db < 0 || *db > std::numeric_limits<int>::max()) return false;
    block_db = static_cast<int>(*db);
    return true;
  }
  if (spec->name == "swapdb") return false;
  const std::span<const std::string_view> args = frame->args;
  const std::vector<size_t> positions = engine::key_positions(*spec, args);
  if (positions.empty()) return false;
  const int db = block_db >= 0 ? block_db : frame->db.value_or(0);
  for (size_t pos : positions) {
    keys.emplace_back(key_database(*spec, args, pos, db), std::string(args[pos]));
  }
  if (spec->name == "move") {
    const std::optional<int64_t> to =
        args.size() == 3 ? common::parse_integer(args[2]) : std::nullopt;
    if (!to || *to < 0 || *to > std::numeric_limits<int>::max()) return false;
    keys.emplace_back(static_cast<int>(*to), std::string(args[1]));
  }
  return true;
}

}  // namespace

int key_database(const engine::CommandSpec& spec, std::span<const std::string_view> argv,
                 size_t pos, int db) {
  if (pos != 2 || spec.name != "copy") return db;
  for (size_t i = 3; i + 1 < argv.size(); ++i) {
    if (common::equals_ignore_case(argv[i], "db")) {
      return static_cast<int>(common::parse_integer(argv[i + 1]).value_or(db));
    }
  }
  return db;
}

bool keys_of_frames(const FrameLog& backlog, uint64_t from, uint64_t to,
                    std::vector<std::pair<int, std::string>>& keys) {
  if (from < backlog.first()) return from >= to;
  uint64_t seen = 0;
  bool ok = true;
  int block_db = -1;
  backlog.for_each_from(from, [&](uint64_t offset, std::string_view bytes) {
    if (offset >= to) return false;
    seen++;
    return ok = keys_of_frame(bytes, block_db, keys);
  });
  return ok && seen == (from < to ? to - from : 0);
}

}  // namespace ringkv::cluster
