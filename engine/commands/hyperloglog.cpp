// HyperLogLog command handlers: PFADD, PFCOUNT, PFMERGE, PFDEBUG and PFSELFTEST, over the pure
// operations of hyperloglog_ops.h. A single-key PFCOUNT that refreshes the cached estimate and a
// PFDEBUG that converts a sketch to dense change the key, so they report it modified (and are
// logged as they arrived, like every deterministic write).
#include "engine/commands/hyperloglog.h"

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/commands/string_ops.h"
#include "engine/types/encoding_limits.h"
#include "engine/types/hyperloglog.h"
#include "engine/types/hyperloglog_ops.h"
#include "protocol/errors.h"

namespace ringkv::engine {

namespace err = protocol::err;

namespace {

// The subcommand as Redis prints it in its error: a C string, with newlines made spaces.
std::string printable_subcommand(std::string_view arg) {
  std::string out(arg.substr(0, arg.find('\0')));
  for (char& c : out) {
    if (c == '\r' || c == '\n') c = ' ';
  }
  return out;
}

}  // namespace

void cmd_pfadd(CommandContext& ctx) {
  bool modified = false;
  auto updated = pf_add(ctx.store, ctx.argv[1], ctx.argv.subspan(2), modified,
                        encoding_limits().hll_sparse_max_bytes);
  // Elements added before a corrupt part of the sketch was found stay added. Redis does not log
  // them; ringkv logs the command so that replaying it reproduces the same bytes.
  if (modified) {
    ctx.key_modified(ctx.argv[1]);
    ctx.notify(common::kNotifyString, "pfadd", ctx.argv[1]);
  }
  if (!updated) {
    ctx.reply.error(updated.error());
    return;
  }
  ctx.reply.integer(*updated ? 1 : 0);
}

void cmd_pfcount(CommandContext& ctx) {
  bool changed = false;
  auto count = pf_count(ctx.store, ctx.argv.subspan(1), changed);
  if (!count) {
    ctx.reply.error(count.error());
    return;
  }
  if (changed) ctx.key_modified(ctx.argv[1]);
  ctx.reply.integer(*count);
}

void cmd_pfmerge(CommandContext& ctx) {
  auto merged = pf_merge(ctx.store, ctx.argv.subspan(1), encoding_limits().hll_sparse_max_bytes);
  if (!merged) {
    ctx.reply.error(merged.error());
    return;
  }
  ctx.key_modified(ctx.argv[1]);
  ctx.notify(common::kNotifyString, "pfadd", ctx.argv[1]);
  ctx.reply.ok();
}

void cmd_pfdebug(CommandContext& ctx) {
  std::string_view key = ctx.argv[2];
  auto sketch = pf_debug_lookup(ctx.store, key);
  if (!sketch) {
    ctx.reply.error(sketch.error());
    return;
  }
  const std::string_view sub = ctx.argv[1].substr(0, ctx.argv[1].find('\0'));
  if (equals_ignore_case(sub, "getreg") || equals_ignore_case(sub, "todense")) {
    auto converted = pf_to_dense(ctx.store, key);
    if (!converted) {
      ctx.reply.error(converted.error());
      return;
    }
    if (*converted) ctx.key_modified(key);
    if (equals_ignore_case(sub, "todense")) {
      ctx.reply.integer(*converted ? 1 : 0);
      return;
    }
    std::string_view dense = ctx.store.peek(key)->string_value();
    std::span<const uint8_t> registers(
        reinterpret_cast<const uint8_t*>(dense.data()) + hll::kHeaderSize,
        hll::kDenseSize - hll::kHeaderSize);
    ctx.reply.array(hll::kRegisters);
    for (size_t i = 0; i < hll::kRegisters; ++i) ctx.reply.integer(hll::dense_get(registers, i));
  } else if (equals_ignore_case(sub, "decode")) {
    if (hll::encoding(*sketch) != hll::kSparse) {
      ctx.reply.error(err::kHllNotSparse);
      return;
    }
    ctx.reply.bulk(hll::decode_sparse(*sketch));
  } else if (equals_ignore_case(sub, "encoding")) {
    ctx.reply.simple(hll::encoding(*sketch) == hll::kDense ? "dense" : "sparse");
  } else {
    ctx.reply.error("ERR Unknown PFDEBUG subcommand '" + printable_subcommand(ctx.argv[1]) + "'");
  }
}

void cmd_pfselftest(CommandContext& ctx) {
  const std::string failure = hll::self_test();
  if (failure.empty()) {
    ctx.reply.ok();
  } else {
    ctx.reply.error(failure);
  }
}

namespace {

constexpr CommandSpec kHyperloglogCommands[] = {
    {.name = "pfadd",
     .arity = -2,
     .flags = kWrite | kDenyOom | kFast,
     .handler = cmd_pfadd,
     .group = "hyperloglog",
     .since = "2.8.9",
     .summary = "Adds the specified elements to the specified HyperLogLog.",
     .complexity = "O(1) to add every element.",
     .syntax = "key<key> [element]...",
     .acl_categories = "write hyperloglog fast",
     .key_specs = "RW insert|1|0|1|0"},
    {.name = "pfcount",
     .arity = -2,
     .flags = kReadonly | kMayReplicate,
     .handler = cmd_pfcount,
     .group = "hyperloglog",
     .since = "2.8.9",
     .summary = "Return the approximated cardinality of the set(s) observed by the HyperLogLog at "
                "key(s).",
     .complexity = "O(1) with a very small average constant time when called with a single key. "
                   "O(N) with N being the number of keys, and much bigger constant times, when "
                   "called with multiple keys.",
     .syntax = "key<key>...",
     .acl_categories = "read hyperloglog slow",
     .key_specs = "RW access|1|-1|1|0|RW because it may change the internal representation of "
                  "the key, and propagate to replicas"},
    {.name = "pfmerge",
     .arity = -2,
     .flags = kWrite | kDenyOom,
     .handler = cmd_pfmerge,
     .group = "hyperloglog",
     .since = "2.8.9",
     .summary = "Merge N different HyperLogLogs into a single one.",
     .complexity = "O(N) to merge N HyperLogLogs, but with high constant times.",
     .syntax = "destkey<key> sourcekey<key:1>...",
     .acl_categories = "write hyperloglog slow",
     .key_specs = "RW access insert|1|0|1|0;RO access|2|-1|1|0"},
    {.name = "pfdebug",
     .arity = 3,
     .flags = kWrite | kDenyOom | kAdmin,
     .handler = cmd_pfdebug,
     .group = "hyperloglog",
     .since = "2.8.9",
     .summary = "Internal commands for debugging HyperLogLog values",
     .complexity = "N/A",
     .syntax = "subcommand key<key>",
     .acl_categories = "write hyperloglog admin slow dangerous",
     .key_specs = "RW access|2|0|1|0",
     .doc_flags = "syscmd"},
    {.name = "pfselftest",
     .arity = 1,
     .flags = kAdmin,
     .handler = cmd_pfselftest,
     .group = "hyperloglog",
     .since = "2.8.9",
     .summary = "An internal command for testing HyperLogLog values",
     .complexity = "N/A",
     .syntax = "",
     .acl_categories = "hyperloglog admin slow dangerous",
     .doc_flags = "syscmd"},
};

}  // namespace

std::span<const CommandSpec> hyperloglog_commands() { return kHyperloglogCommands; }

}  // namespace ringkv::engine
