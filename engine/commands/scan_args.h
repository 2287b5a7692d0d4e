// The arguments and reply of the cursor commands SCAN, HSCAN and SSCAN, parsed and written once
// with Redis 7.0.15's rules (scanGenericCommand): the cursor is checked before the key, the
// options after it, left to right, the first bad one reported.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/command.h"
#include "protocol/reply_writer.h"

namespace ringkv::engine {

inline constexpr std::string_view kInvalidCursor = "ERR invalid cursor";
// COUNT when the command names none.
inline constexpr int64_t kDefaultScanCount = 10;

// What a scan step looks for.
struct ScanOptions {
  int64_t count = kDefaultScanCount;  // at least 1
  std::string_view pattern;           // MATCH; only used when use_pattern
  bool use_pattern = false;           // false for no MATCH and for MATCH *
  std::string_view type;              // TYPE (SCAN only); only used when use_type
  bool use_type = false;

  // Whether `item` passes MATCH.
  bool matches(std::string_view item) const;
};

// Parses the cursor argument; on failure replies "ERR invalid cursor" and returns false.
bool scan_cursor_or_reply(CommandContext& ctx, std::string_view arg, uint64_t& cursor);

// Parses the options from argv[first] on: COUNT n (an integer, then at least 1), MATCH pattern
// and, when `allow_type`, TYPE name. On the first bad one replies Redis's error (kNotInteger,
// kSyntax) and returns false.
bool scan_options_or_reply(CommandContext& ctx, size_t first, bool allow_type,
                           ScanOptions& options);

// The reply of a scan on a missing key: cursor 0 and no items.
void reply_empty_scan(protocol::ReplyWriter& reply);

// The reply of a scan step: the next cursor (printed unsigned, as Redis's addReplyBulkLongLong
// of the cursor) and the items found.
template <typename Item>
void reply_scan(protocol::ReplyWriter& reply, uint64_t next, const std::vector<Item>& items) {
  reply.array(2);
  reply.bulk_integer(static_cast<int64_t>(next));
  reply.array(items.size());
  for (const Item& item : items) reply.bulk(item);
}

}  // namespace ringkv::engine
