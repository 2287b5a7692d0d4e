// LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN], over the pure computation of
// types/lcs.h, with Redis 7.0.15's argument order, errors and reply shapes (IDX answers a map in
// RESP3 and a flat array in RESP2).
#include "engine/commands/lcs.h"

#include <cstdint>
#include <string_view>

#include "engine/commands/handler_args.h"
#include "engine/commands/string_ops.h"
#include "engine/keyspace/store.h"
#include "engine/types/lcs.h"
#include "protocol/errors.h"

namespace ringkv::engine {

namespace err = protocol::err;

namespace {

constexpr std::string_view kNotStrings = "ERR The specified keys must contain string values";
constexpr std::string_view kLenAndIdx =
    "ERR If you want both the length and indexes, please just use IDX.";
constexpr std::string_view kTooLong = "ERR String too long for LCS";
constexpr std::string_view kTooMuchMemory =
    "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len";

}  // namespace

void cmd_lcs(CommandContext& ctx) {
  const Entry* ea = ctx.store.lookup(ctx.argv[1]);
  const Entry* eb = ctx.store.lookup(ctx.argv[2]);
  if ((ea != nullptr && ea->type() != ValueType::kString) ||
      (eb != nullptr && eb->type() != ValueType::kString)) {
    ctx.reply.error(kNotStrings);
    return;
  }
  // Copied: looking the second key up may expire it, and the first value must stay readable.
  std::string a_text = ea == nullptr ? std::string() : std::string(ea->string_value());
  std::string b_text = eb == nullptr ? std::string() : std::string(eb->string_value());
  bool get_len = false;
  bool get_idx = false;
  bool with_match_len = false;
  int64_t min_match_len = 0;
  for (size_t j = 3; j < ctx.argv.size(); ++j) {
    const std::string_view opt = ctx.argv[j];
    const bool more = j + 1 < ctx.argv.size();
    if (is(opt, "idx")) {
      get_idx = true;
    } else if (is(opt, "len")) {
      get_len = true;
    } else if (is(opt, "withmatchlen")) {
      with_match_len = true;
    } else if (is(opt, "minmatchlen") && more) {
      if (!int64_or_reply(ctx, ctx.argv[j + 1], min_match_len)) return;
      if (min_match_len < 0) min_match_len = 0;
      ++j;
    } else {
      ctx.reply.error(err::kSyntax);
      return;
    }
  }
  if (get_idx && get_len) {
    ctx.reply.error(kLenAndIdx);
    return;
  }
  if (a_text.size() >= UINT32_MAX - 1 || b_text.size() >= UINT32_MAX - 1) {
    ctx.reply.error(kTooLong);
    return;
  }
  if (lcs_table_bytes(a_text.size(), b_text.size()) > static_cast<uint64_t>(kProtoMaxBulkLen)) {
    ctx.reply.error(kTooMuchMemory);
    return;
  }
  const LcsResult result = lcs(a_text, b_text, get_idx || !get_len);
  if (get_len) {
    ctx.reply.integer(result.length);
    return;
  }
  if (!get_idx) {
    ctx.reply.bulk(result.subsequence);
    return;
  }
  ctx.reply.map(2);
  ctx.reply.bulk("matches");
  size_t shown = 0;
  for (const LcsRange& r : result.ranges) {
    if (min_match_len == 0 || r.length() >= static_cast<uint64_t>(min_match_len)) ++shown;
  }
  ctx.reply.array(shown);
  for (const LcsRange& r : result.ranges) {
    if (min_match_len != 0 && r.length() < static_cast<uint64_t>(min_match_len)) continue;
    ctx.reply.array(with_match_len ? 3 : 2);
    ctx.reply.array(2);
    ctx.reply.integer(r.a_start);
    ctx.reply.integer(r.a_end);
    ctx.reply.array(2);
    ctx.reply.integer(r.b_start);
    ctx.reply.integer(r.b_end);
    if (with_match_len) ctx.reply.integer(r.length());
  }
  ctx.reply.bulk("len");
  ctx.reply.integer(result.length);
}

namespace {

constexpr CommandSpec kLcsCommands[] = {
    {.name = "lcs",
     .arity = -3,
     .flags = kReadonly,
     .handler = cmd_lcs,
     .group = "string",
     .since = "7.0.0",
     .summary = "Find longest common substring",
     .complexity = "O(N*M) where N and M are the lengths of s1 and s2, respectively",
     .syntax = "key1<key> key2<key> [LEN] [IDX] [MINMATCHLEN=len<integer>] [WITHMATCHLEN]",
     .acl_categories = "read string slow",
     .key_specs = "RO access|1|1|1|0"},
};

}  // namespace

std::span<const CommandSpec> lcs_commands() { return kLcsCommands; }

}  // namespace ringkv::engine
