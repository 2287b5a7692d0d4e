// Bitmap command handlers: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD and BITFIELD_RO.
// Arguments are checked in Redis 7.0.15's order, which for BITCOUNT and BITPOS looks the key up
// before reading the range (a missing key answers 0 whatever the range says); the work is done
// by the pure operations of bitmap_ops.h.
#include "engine/commands/bitmap.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/commands/handler_args.h"
#include "engine/commands/string_ops.h"
#include "engine/key_specs.h"
#include "engine/keyspace/store.h"
#include "engine/types/bitmap_ops.h"
#include "protocol/errors.h"

namespace ringkv::engine {

namespace err = protocol::err;

namespace {

// The string at `key` for BITCOUNT/BITPOS/GETBIT: false after replying WRONGTYPE; `out` is null
// when the key is absent.
bool read_string_or_reply(CommandContext& ctx, std::string_view key, const Entry*& out) {
  auto e = lookup_string(ctx.store, key);
  if (!e) {
    ctx.reply.error(e.error());
    return false;
  }
  out = *e;
  return true;
}

void bitfield_generic(CommandContext& ctx, bool readonly) {
  auto ops = parse_bitfield(ctx.argv.subspan(2), bulk_limit(ctx));
  if (!ops) {
    ctx.reply.error(ops.error());
    return;
  }
  if (readonly) {
    for (const BitfieldOp& op : *ops) {
      if (op.kind != BitfieldOp::kGet) {
        ctx.reply.error(err::kBitfieldReadonly);
        return;
      }
    }
  }
  size_t changed = 0;
  auto replies = bitfield(ctx.store, ctx.argv[1], *ops, changed);
  if (!replies) {
    ctx.reply.error(replies.error());
    return;
  }
  if (changed > 0) {
    ctx.key_modified(ctx.argv[1]);
    ctx.notify(common::kNotifyString, "setbit", ctx.argv[1]);
  }
  ctx.reply.array((*replies).size());
  for (const std::optional<int64_t>& r : *replies) {
    if (r) {
      ctx.reply.integer(*r);
    } else {
      ctx.reply.null();
    }
  }
}

}  // namespace

void cmd_setbit(CommandContext& ctx) {
  auto offset = parse_bit_offset(ctx.argv[2], 0, bulk_limit(ctx));
  if (!offset) {
    ctx.reply.error(offset.error());
    return;
  }
  int64_t on = 0;
  if (!parse_int64(ctx.argv[3], on) || (on & ~int64_t{1}) != 0) {
    ctx.reply.error(err::kBitValue);
    return;
  }
  bool changed = false;
  auto old = set_bit(ctx.store, ctx.argv[1], *offset, on == 1, changed);
  if (!old) {
    ctx.reply.error(old.error());
    return;
  }
  if (changed) {
    ctx.key_modified(ctx.argv[1]);
    ctx.notify(common::kNotifyString, "setbit", ctx.argv[1]);
  }
  ctx.reply.integer(*old);
}

void cmd_getbit(CommandContext& ctx) {
  auto offset = parse_bit_offset(ctx.argv[2], 0, bulk_limit(ctx));
  if (!offset) {
    ctx.reply.error(offset.error());
    return;
  }
  const Entry* e = nullptr;
  if (!read_string_or_reply(ctx, ctx.argv[1], e)) return;
  ctx.reply.integer(e == nullptr ? 0 : bit_at(e->string_value(), *offset));
}

void cmd_bitcount(CommandContext& ctx) {
  const Entry* e = nullptr;
  if (!read_string_or_reply(ctx, ctx.argv[1], e)) return;
  if (e == nullptr) {
    ctx.reply.integer(0);
    return;
  }
  std::string_view value = e->string_value();
  const size_t argc = ctx.argv.size();
  if (argc == 2) {
    ctx.reply.integer(count_bits(value));
    return;
  }
  if (argc != 4 && argc != 5) {
    ctx.reply.error(err::kSyntax);
    return;
  }
  int64_t start = 0;
  int64_t end = 0;
  if (!int64_or_reply(ctx, ctx.argv[2], start) || !int64_or_reply(ctx, ctx.argv[3], end)) return;
  // An inverted negative range is empty before the unit is even read.
  if (start < 0 && end < 0 && start > end) {
    ctx.reply.integer(0);
    return;
  }
  BitUnit unit = BitUnit::kByte;
  if (argc == 5) {
    auto parsed = parse_bit_unit(ctx.argv[4]);
    if (!parsed) {
      ctx.reply.error(err::kSyntax);
      return;
    }
    unit = *parsed;
  }
  ctx.reply.integer(count_bits(value, start, end, unit));
}

void cmd_bitpos(CommandContext& ctx) {
  int64_t bit = 0;
  if (!int64_or_reply(ctx, ctx.argv[2], bit)) return;
  if (bit != 0 && bit != 1) {
    ctx.reply.error(err::kBitposBit);
    return;
  }
  const Entry* e = nullptr;
  if (!read_string_or_reply(ctx, ctx.argv[1], e)) return;
  // A missing key is an endless run of zeros.
  if (e == nullptr) {
    ctx.reply.integer(bit ? -1 : 0);
    return;
  }
  std::string_view value = e->string_value();
  const size_t argc = ctx.argv.size();
  if (argc == 3) {
    ctx.reply.integer(find_bit(value, static_cast<int>(bit), 0, std::nullopt, BitUnit::kByte));
    return;
  }
  if (argc > 6) {
    ctx.reply.error(err::kSyntax);
    return;
  }
  int64_t start = 0;
  if (!int64_or_reply(ctx, ctx.argv[3], start)) return;
  BitUnit unit = BitUnit::kByte;
  if (argc == 6) {
    auto parsed = parse_bit_unit(ctx.argv[5]);
    if (!parsed) {
      ctx.reply.error(err::kSyntax);
      return;
    }
    unit = *parsed;
  }
  std::optional<int64_t> end;
  if (argc >= 5) {
    int64_t given = 0;
    if (!int64_or_reply(ctx, ctx.argv[4], given)) return;
    end = given;
  }
  ctx.reply.integer(find_bit(value, static_cast<int>(bit), start, end, unit));
}

void cmd_bitop(CommandContext& ctx) {
  auto op = parse_bit_op(ctx.argv[1]);
  if (!op) {
    ctx.reply.error(err::kSyntax);
    return;
  }
  if (*op == BitOp::kNot && ctx.argv.size() != 4) {
    ctx.reply.error(err::kBitopNot);
    return;
  }
  bool changed = false;
  auto length = bit_op_store(ctx.store, *op, ctx.argv[2], ctx.argv.subspan(3), changed);
  if (!length) {
    ctx.reply.error(length.error());
    return;
  }
  if (changed) {
    ctx.key_modified(ctx.argv[2]);
    ctx.notify(*length > 0 ? common::kNotifyString : common::kNotifyGeneric,
               *length > 0 ? "set" : "del", ctx.argv[2]);
  }
  ctx.reply.integer(static_cast<int64_t>(*length));
}

void cmd_bitfield(CommandContext& ctx) { bitfield_generic(ctx, false); }

void cmd_bitfield_ro(CommandContext& ctx) { bitfield_generic(ctx, true); }

namespace {

// bitfieldGetKeys: read-only while every operation is a GET (an OVERFLOW changes nothing);
// anything else, a syntax error too, may write.
void bitfield_key_flags(std::span<const std::string_view> argv, std::vector<KeyReference>& keys) {
  if (argv.size() < 2) return;
  bool readonly = true;
  for (size_t i = 2; i < argv.size() && readonly; ++i) {
    const size_t left = argv.size() - i - 1;
    if (equals_ignore_case(argv[i], "get") && left >= 2) {
      i += 2;
    } else if (equals_ignore_case(argv[i], "overflow") && left >= 1) {
      i += 1;
    } else {
      readonly = false;
    }
  }
  keys.push_back(KeyReference{
      1, static_cast<uint16_t>(readonly ? kKeyRO | kKeyAccess : kKeyRW | kKeyAccess | kKeyUpdate)});
}

constexpr CommandSpec kBitmapCommands[] = {
    {.name = "setbit",
     .arity = 4,
     .flags = kWrite | kDenyOom,
     .handler = cmd_setbit,
     .group = "bitmap",
     .since = "2.2.0",
     .summary = "Sets or clears the bit at offset in the string value stored at key",
     .complexity = "O(1)",
     .syntax = "key<key> offset<integer> value<integer>",
     .acl_categories = "write bitmap slow",
     .key_specs = "RW access update|1|0|1|0"},
    {.name = "getbit",
     .arity = 3,
     .flags = kReadonly | kFast,
     .handler = cmd_getbit,
     .group = "bitmap",
     .since = "2.2.0",
     .summary = "Returns the bit value at offset in the string value stored at key",
     .complexity = "O(1)",
     .syntax = "key<key> offset<integer>",
     .acl_categories = "read bitmap fast",
     .key_specs = "RO access|1|0|1|0"},
    {.name = "bitcount",
     .arity = -2,
     .flags = kReadonly,
     .handler = cmd_bitcount,
     .group = "bitmap",
     .since = "2.6.0",
     .summary = "Count set bits in a string",
     .complexity = "O(N)",
     .syntax = "key<key> [index: start<integer> end<integer> [index_unit: BYTE | BIT]@7.0.0]",
     .acl_categories = "read bitmap slow",
     .key_specs = "RO access|1|0|1|0",
     .history = "7.0.0|Added the `BYTE|BIT` option."},
    {.name = "bitpos",
     .arity = -3,
     .flags = kReadonly,
     .handler = cmd_bitpos,
     .group = "bitmap",
     .since = "2.8.7",
     .summary = "Find first bit set or clear in a string",
     .complexity = "O(N)",
     .syntax = "key<key> bit<integer> [index: start<integer> [end_index: end<integer> "
               "[index_unit: BYTE | BIT]@7.0.0]]",
     .acl_categories = "read bitmap slow",
     .key_specs = "RO access|1|0|1|0",
     .history = "7.0.0|Added the `BYTE|BIT` option."},
    {.name = "bitop",
     .arity = -4,
     .flags = kWrite | kDenyOom,
     .handler = cmd_bitop,
     .group = "bitmap",
     .since = "2.6.0",
     .summary = "Perform bitwise operations between strings",
     .complexity = "O(N)",
     .syntax = "operation destkey<key> key<key:1>...",
     .acl_categories = "write bitmap slow",
     .key_specs = "OW update|2|0|1|0;RO access|3|-1|1|0"},
    {.name = "bitfield",
     .arity = -2,
     .flags = kWrite | kDenyOom,
     .handler = cmd_bitfield,
     .group = "bitmap",
     .since = "3.2.0",
     .summary = "Perform arbitrary bitfield integer operations on strings",
     .complexity = "O(1) for each subcommand specified",
     .syntax = "key<key> [operation: (GET=encoding_offset: encoding offset<integer>) | (write: "
               "[OVERFLOW=wrap_sat_fail: WRAP | SAT | FAIL] (write_operation: "
               "(SET=encoding_offset_value: encoding offset<integer> value<integer>) | "
               "(INCRBY=encoding_offset_increment: encoding offset<integer> "
               "increment<integer>)))]...",
     .acl_categories = "write bitmap slow",
     .key_specs = "RW access update variable_flags|1|0|1|0|This command allows both access and "
                  "modification of the key",
     .find_key_flags = bitfield_key_flags},
    {.name = "bitfield_ro",
     .arity = -2,
     .flags = kReadonly | kFast,
     .handler = cmd_bitfield_ro,
     .group = "bitmap",
     .since = "6.0.0",
     .summary = "Perform arbitrary bitfield integer operations on strings. Read-only variant of "
                "BITFIELD",
     .complexity = "O(1) for each subcommand specified",
     .syntax = "key<key> [GET=encoding_offset: encoding offset<integer>]...+",
     .acl_categories = "read bitmap fast",
     .key_specs = "RO access|1|0|1|0"},
};

}  // namespace

std::span<const CommandSpec> bitmap_commands() { return kBitmapCommands; }

}  // namespace ringkv::engine
