// SCAN/HSCAN/SSCAN argument parsing and replies (see scan_args.h).
#include "engine/commands/scan_args.h"

#include "common/glob.h"
#include "common/numbers.h"
#include "engine/commands/string_ops.h"
#include "protocol/errors.h"

namespace ringkv::engine {

namespace err = protocol::err;

bool ScanOptions::matches(std::string_view item) const {
  return !use_pattern || common::glob_match(pattern, item);
}

bool scan_cursor_or_reply(CommandContext& ctx, std::string_view arg, uint64_t& cursor) {
  if (common::parse_scan_cursor(arg, cursor)) return true;
  ctx.reply.error(kInvalidCursor);
  return false;
}

bool scan_options_or_reply(CommandContext& ctx, size_t first, bool allow_type,
                           ScanOptions& options) {
  for (size_t i = first; i < ctx.argv.size(); i += 2) {
    const bool has_value = i + 1 < ctx.argv.size();
    if (equals_ignore_case(ctx.argv[i], "count") && has_value) {
      if (!parse_int64(ctx.argv[i + 1], options.count)) {
        ctx.reply.error(err::kNotInteger);
        return false;
      }
      if (options.count < 1) {
        ctx.reply.error(err::kSyntax);
        return false;
      }
    } else if (equals_ignore_case(ctx.argv[i], "match") && has_value) {
      options.pattern = ctx.argv[i + 1];
      options.use_pattern = options.pattern != "*";
    } else if (allow_type && equals_ignore_case(ctx.argv[i], "type") && has_value) {
      options.type = ctx.argv[i + 1];
      options.use_type = true;
    } else {
      ctx.reply.error(err::kSyntax);
      return false;
    }
  }
  return true;
}

void reply_empty_scan(protocol::ReplyWriter& reply) {
  reply.array(2);
  reply.bulk("0");
  reply.array(0);
}

}  // namespace ringkv::engine
