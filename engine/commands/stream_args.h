// What the stream commands share: ID arguments with Redis 7.0.15's errors, XADD's and XTRIM's
// trimming options, and the reply shape of stream entries.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/command.h"
#include "engine/types/stream_type.h"
#include "protocol/reply_writer.h"

namespace ringkv::engine {

inline constexpr std::string_view kInvalidStartInterval = "ERR invalid start ID for the interval";
inline constexpr std::string_view kInvalidEndInterval = "ERR invalid end ID for the interval";

// An ID where '-' and '+' are refused (streamParseStrictIDOrReply); replies kInvalidStreamID.
bool strict_id_or_reply(CommandContext& ctx, std::string_view arg, StreamID& out,
                        uint64_t missing_seq = 0);
// An ID where '-' and '+' stand for the smallest and largest (streamParseIDOrReply).
bool id_or_reply(CommandContext& ctx, std::string_view arg, StreamID& out,
                 uint64_t missing_seq = 0);

// A range's start (an exclusive "(id" moves to the next ID) as XRANGE, XPENDING and XAUTOCLAIM
// read it; replies kInvalidStreamID or kInvalidStartInterval.
bool range_start_or_reply(CommandContext& ctx, std::string_view arg, StreamID& out);
// A range's end (an exclusive "(id" moves to the previous ID); replies kInvalidStreamID or
// kInvalidEndInterval.
bool range_end_or_reply(CommandContext& ctx, std::string_view arg, StreamID& out);

// XADD's and XTRIM's options (streamParseAddOrTrimArgsOrReply), from argv[2]. For XADD,
// `id_pos` is set to the ID argument's position (the first argument that is no option) and
// `id` / `id_given` / `seq_given` to what it says ('*': not given).
struct AddTrimArgs {
  StreamTrim trim;
  bool no_mkstream = false;
  size_t strategy_pos = 0;  // the position of the threshold argument
  size_t id_pos = 0;
  bool id_given = false;
  bool seq_given = true;
  StreamID id;
};
bool add_trim_args_or_reply(CommandContext& ctx, bool xadd, AddTrimArgs& out);

// One entry as XRANGE and XREAD reply it: [id, [field, value, ...]].
void reply_stream_item(protocol::ReplyWriter& reply, const StreamItem& item);
// The entries of [start, end] (descending with `reverse`), at most `count` (0: all), as an
// array; returns how many.
size_t reply_stream_range(protocol::ReplyWriter& reply, const StreamObject& stream, StreamID start,
                          StreamID end, bool reverse, int64_t count);

// Records consumer group changes as `commands` (their effective form for the append-only file)
// and reports them as data changes; nothing when `commands` is empty.
void record_group_effects(CommandContext& ctx, std::vector<std::vector<std::string>>& commands);

// "<n>" for integers put in commands the append-only file records.
std::string decimal(int64_t v);
std::string decimal(uint64_t v);

}  // namespace ringkv::engine
