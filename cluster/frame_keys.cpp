// The keys a run of replication frames writes (see frame_keys.h).
#include "cluster/frame_keys.h"

#include <limits>

#include "cluster/peer_frame.h"
#include "common/numbers.h"
#include "engine/command.h"
#include "protocol/resp_parser.h"

namespace ringkv::cluster {

bool keys_of_frames(const FrameLog& backlog, uint64_t from, uint64_t to,
                    std::vector<std::pair<int, std::string>>& keys) {
  if (from >= to) return true;
  if (from < backlog.first()) return false;
  protocol::RespParser parser;
  std::vector<std::string_view> argv;
  std::vector<size_t> positions;
  uint64_t seen = 0;
  bool ok = false;
  bool in_block = false;
  int block_db = 0;  // inside a MULTI block, the database its SELECTs chose
  backlog.for_each_from(from, [&](uint64_t offset, std::string_view bytes) {
    if (offset >= to) return false;
    seen++;
    ok = false;
    if (parser.parse({bytes.data(), bytes.size()}, argv).status !=
        protocol::ParseStatus::kComplete) {
      return false;
    }
    const engine::Result<PeerFrame> frame = parse_peer_frame(argv, std::numeric_limits<int>::max());
    if (!frame) return false;
    if (frame->kind == PeerFrameKind::kReplication) {
      // SYNCED and DRAINED write nothing; FLUSH drops every key.
      ok = !frame->args.empty() && !common::equals_ignore_case(frame->args[0], "flush");
      return ok;
    }
    std::string error;
    const engine::CommandSpec* spec = frame->kind == PeerFrameKind::kCommand
                                          ? engine::resolve_command(frame->args, error)
                                          : nullptr;
    if (spec == nullptr) return false;
    if (spec->name == "multi" || spec->name == "exec") {
      in_block = spec->name == "multi";
      block_db = 0;
      return ok = true;
    }
    if (spec->name == "select") {
      const std::optional<int64_t> db =
          frame->args.size() == 2 ? common::parse_integer(frame->args[1]) : std::nullopt;
      if (!db || *db < 0 || *db > std::numeric_limits<int>::max()) return false;
      block_db = static_cast<int>(*db);
      return ok = true;
    }
    if (spec->name == "move" || spec->name == "copy" || spec->name == "swapdb") return false;
    engine::key_positions(*spec, frame->args, positions);
    if (positions.empty()) return false;
    const int db = in_block ? block_db : frame->db.value_or(0);
    for (size_t pos : positions) keys.emplace_back(db, std::string(frame->args[pos]));
    return ok = true;
  });
  return ok && seen == to - from;
}

}  // namespace ringkv::cluster
