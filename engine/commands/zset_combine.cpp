// Sorted-set algebra: ZUNION, ZINTER, ZDIFF and their STORE forms (Redis 7.0.15's
// zunionInterDiffGenericCommand), with WEIGHTS, AGGREGATE and WITHSCORES, and the key finders that
// name their numkeys-given keys for routing and COMMAND GETKEYS. Plain sets are accepted as
// inputs, every member scoring 1, as in Redis.
#include "engine/commands/zset_combine.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/commands/string_ops.h"
#include "engine/commands/zset.h"
#include "engine/keyspace/store.h"
#include "engine/types/set_type.h"
#include "engine/types/zset_type.h"
#include "protocol/errors.h"

namespace ringkv::engine {

namespace err = protocol::err;

namespace {

constexpr std::string_view kAtLeastOneKey = "ERR at least 1 input key is needed for '%s' command";
constexpr std::string_view kWeightNotFloat = "ERR weight value is not a float";

enum class Op : uint8_t { kUnion, kInter, kDiff };
enum class Aggregate : uint8_t { kSum, kMin, kMax };

// One input: a sorted set, a set (scores 1) or nothing (a missing key), with its weight.
struct ZSource {
  const ZSetObject* zset = nullptr;
  const SetObject* set = nullptr;
  double weight = 1;

  size_t size() const { return zset ? zset->size() : set ? set->size() : 0; }
  void for_each(const ZSetObject::Visit& visit) const {
    if (zset != nullptr) {
      zset->for_each(visit);
    } else if (set != nullptr) {
      set->for_each([&](std::string_view m) { visit(m, 1.0); });
    }
  }
  std::optional<double> find(std::string_view member) const {
    if (zset != nullptr) return zset->score(member);
    if (set != nullptr && set->contains(member)) return 1.0;
    return std::nullopt;
  }
};

// Redis's zunionInterAggregate: a sum of +inf and -inf is 0, not NaN.
void aggregate_into(double& target, double value, Aggregate aggregate) {
  switch (aggregate) {
    case Aggregate::kSum:
      target += value;
      if (std::isnan(target)) target = 0;
      break;
    case Aggregate::kMin:
      target = value < target ? value : target;
      break;
    case Aggregate::kMax:
      target = value > target ? value : target;
      break;
  }
}

// Parses numkeys at argv[index]: the count of keys that follow, or 0 when malformed.
size_t numkeys_at(std::span<const std::string_view> argv, size_t index) {
  int64_t n = 0;
  if (index >= argv.size() || !parse_int64(argv[index], n) || n < 1) return 0;
  if (static_cast<uint64_t>(n) > argv.size() - index - 1) return 0;
  return static_cast<size_t>(n);
}

// One element of a result.
struct Element {
  std::string member;
  double score;
};

// The result of an operation, in sorted-set order.
std::vector<Element> compute(Op op, std::vector<ZSource>& sources, Aggregate aggregate) {
  std::vector<Element> result;
  if (op != Op::kDiff) {
    // Smallest first, as Redis (its qsort is stable here): fewer lookups, same sums.
    std::stable_sort(sources.begin(), sources.end(),
                     [](const ZSource& a, const ZSource& b) { return a.size() < b.size(); });
  }
  switch (op) {
    case Op::kInter: {
      if (sources[0].size() == 0) break;
      sources[0].for_each([&](std::string_view member, double score) {
        double total = sources[0].weight * score;
        if (std::isnan(total)) total = 0;
        for (size_t j = 1; j < sources.size(); ++j) {
          const auto found = sources[j].find(member);
          if (!found) return;
          aggregate_into(total, *found * sources[j].weight, aggregate);
        }
        result.push_back({std::string(member), total});
      });
      break;
    }
    case Op::kUnion: {
      std::unordered_map<std::string, double> totals;
      for (const ZSource& source : sources) {
        source.for_each([&](std::string_view member, double score) {
          double value = source.weight * score;
          if (std::isnan(value)) value = 0;
          auto [it, inserted] = totals.try_emplace(std::string(member), value);
          if (!inserted) aggregate_into(it->second, value, aggregate);
        });
      }
      result.reserve(totals.size());
      for (auto& [member, score] : totals) result.push_back({member, score});
      break;
    }
    case Op::kDiff: {
      sources[0].for_each([&](std::string_view member, double score) {
        for (size_t j = 1; j < sources.size(); ++j) {
          if (sources[j].find(member)) return;
        }
        result.push_back({std::string(member), score});
      });
      break;
    }
  }
  std::sort(result.begin(), result.end(), [](const Element& a, const Element& b) {
    return a.score != b.score ? a.score < b.score : a.member < b.member;
  });
  return result;
}

// A STORE destination holding `elements`, encoded as Redis's zsetConvertToListpackIfNeeded
// decides from the result's size and longest member.
std::unique_ptr<ZSetObject> build_zset(const std::vector<Element>& elements) {
  size_t longest = 0;
  for (const Element& e : elements) longest = std::max(longest, e.member.size());
  const bool small = elements.size() <= encoding_limits().zset_max_listpack_entries &&
                     longest <= encoding_limits().zset_max_listpack_value;
  auto zset = std::make_unique<ZSetObject>(small ? ZSetObject::Encoding::kListpack
                                                 : ZSetObject::Encoding::kSkiplist);
  for (const Element& e : elements) zset->set(e.member, e.score);
  return zset;
}

// ZUNION/ZINTER/ZDIFF (dest empty, numkeys at argv[1]) and their STORE forms (dest argv[1],
// numkeys at argv[2]).
// With `cardinality` (ZINTERCARD) only the size of the intersection is replied, at most LIMIT.
void zsetop_generic(CommandContext& ctx, Op op, bool store, bool cardinality = false) {
  const size_t numkeys_index = store ? 2 : 1;
  int64_t numkeys = 0;
  if (!parse_int64(ctx.argv[numkeys_index], numkeys)) {
    ctx.reply.error(err::kNotInteger);
    return;
  }
  if (numkeys < 1) {
    std::string text(kAtLeastOneKey);
    text.replace(text.find("%s"), 2, to_lower(ctx.argv[0]));
    ctx.reply.error(text);
    return;
  }
  if (static_cast<uint64_t>(numkeys) > ctx.argv.size() - numkeys_index - 1) {
    ctx.reply.error(err::kSyntax);
    return;
  }
  std::vector<ZSource> sources(static_cast<size_t>(numkeys));
  size_t j = numkeys_index + 1;
  for (ZSource& source : sources) {
    const std::string_view key = ctx.argv[j++];
    // Every form reads its inputs as reads (hits, misses and keymiss events), as Redis 7.0 does.
    const Entry* e = ctx.store.lookup(key);
    if (e == nullptr) continue;
    if (e->type() == ValueType::kZSet) {
      source.zset = static_cast<const ZSetObject*>(e->object());
    } else if (e->type() == ValueType::kSet) {
      source.set = static_cast<const SetObject*>(e->object());
    } else {
      ctx.reply.error(err::kWrongType);
      return;
    }
  }
  Aggregate aggregate = Aggregate::kSum;
  bool with_scores = false;
  int64_t limit = 0;  // ZINTERCARD's LIMIT; 0: none
  while (j < ctx.argv.size()) {
    const size_t remaining = ctx.argv.size() - j;
    const std::string_view opt = ctx.argv[j];
    if (op != Op::kDiff && !cardinality && remaining >= sources.size() + 1 &&
        equals_ignore_case(opt, "weights")) {
      ++j;
      for (ZSource& source : sources) {
        if (!parse_score(ctx.argv[j++], source.weight)) {
          ctx.reply.error(kWeightNotFloat);
          return;
        }
      }
    } else if (op != Op::kDiff && !cardinality && remaining >= 2 &&
               equals_ignore_case(opt, "aggregate")) {
      const std::string_view how = ctx.argv[j + 1];
      if (equals_ignore_case(how, "sum")) {
        aggregate = Aggregate::kSum;
      } else if (equals_ignore_case(how, "min")) {
        aggregate = Aggregate::kMin;
      } else if (equals_ignore_case(how, "max")) {
        aggregate = Aggregate::kMax;
      } else {
        ctx.reply.error(err::kSyntax);
        return;
      }
      j += 2;
    } else if (!store && !cardinality && equals_ignore_case(opt, "withscores")) {
      with_scores = true;
      ++j;
    } else if (cardinality && remaining >= 2 && equals_ignore_case(opt, "limit")) {
      if (!parse_int64(ctx.argv[j + 1], limit) || limit < 0) {
        ctx.reply.error(err::kLimitNegative);
        return;
      }
      j += 2;
    } else {
      ctx.reply.error(err::kSyntax);
      return;
    }
  }
  const std::vector<Element> result = compute(op, sources, aggregate);
  if (cardinality) {
    const auto size = static_cast<int64_t>(result.size());
    ctx.reply.integer(limit > 0 && limit < size ? limit : size);
    return;
  }
  if (store) {
    const std::string_view dest = ctx.argv[1];
    // An empty result changes the destination only when it deletes an existing key.
    const bool existed = result.empty() ? ctx.store.erase(dest) : ctx.store.peek(dest) != nullptr;
    if (!result.empty()) {
      ctx.store.put_object(dest, build_zset(result));
      ctx.key_ready(dest);
      ctx.notify(
          common::kNotifyZset,
          op == Op::kUnion ? "zunionstore" : (op == Op::kInter ? "zinterstore" : "zdiffstore"),
          dest);
    } else if (existed) {
      ctx.notify(common::kNotifyGeneric, "del", dest);
    }
    if (existed || !result.empty()) ctx.key_modified(dest);
    ctx.reply.integer(static_cast<int64_t>(result.size()));
    return;
  }
  // WITHSCORES: one flat array in RESP2, [member, score] pairs in RESP3.
  const bool resp3 = ctx.reply.version() == protocol::RespVersion::kResp3;
  ctx.reply.array(with_scores && !resp3 ? result.size() * 2 : result.size());
  for (const Element& e : result) {
    if (with_scores && resp3) ctx.reply.array(2);
    ctx.reply.bulk(e.member);
    if (with_scores) ctx.reply.double_value(e.score);
  }
}

}  // namespace

void zsetop_keys(std::span<const std::string_view> argv, std::vector<size_t>& positions) {
  const size_t n = numkeys_at(argv, 1);
  for (size_t i = 0; i < n; ++i) positions.push_back(2 + i);
}

void zsetop_store_keys(std::span<const std::string_view> argv, std::vector<size_t>& positions) {
  const size_t n = numkeys_at(argv, 2);
  if (n == 0) return;
  positions.push_back(1);
  for (size_t i = 0; i < n; ++i) positions.push_back(3 + i);
}

void cmd_zunion(CommandContext& ctx) { zsetop_generic(ctx, Op::kUnion, false); }

void cmd_zinter(CommandContext& ctx) { zsetop_generic(ctx, Op::kInter, false); }

void cmd_zintercard(CommandContext& ctx) { zsetop_generic(ctx, Op::kInter, false, true); }

void cmd_zdiff(CommandContext& ctx) { zsetop_generic(ctx, Op::kDiff, false); }

void cmd_zunionstore(CommandContext& ctx) { zsetop_generic(ctx, Op::kUnion, true); }

void cmd_zinterstore(CommandContext& ctx) { zsetop_generic(ctx, Op::kInter, true); }

void cmd_zdiffstore(CommandContext& ctx) { zsetop_generic(ctx, Op::kDiff, true); }

// The table rows of this family, in the order COMMAND lists them (command_table.cpp
// assembles the families).
namespace {

constexpr CommandSpec kZsetCombineCommands[] = {
    {.name = "zunionstore",
     .arity = -4,
     .flags = kWrite | kDenyOom,
     .handler = cmd_zunionstore,
     .group = "sorted-set",
     .since = "2.0.0",
     .summary = "Add multiple sorted sets and store the resulting sorted set in a new key",
     .complexity = "O(N)+O(M log(M)) with N being the sum of the sizes of the input sorted sets, "
                   "and M being the number of elements in the resulting sorted set.",
     .syntax = "destination<key> numkeys<integer> key<key:1>... [WEIGHTS=weight<integer>]... "
               "[AGGREGATE=aggregate: SUM | MIN | MAX]",
     .acl_categories = "write sortedset slow",
     .key_specs = "OW update|1|0|1|0;RO access|2|keynum|0,1,1",
     .find_keys = zsetop_store_keys},
    {.name = "zinterstore",
     .arity = -4,
     .flags = kWrite | kDenyOom,
     .handler = cmd_zinterstore,
     .group = "sorted-set",
     .since = "2.0.0",
     .summary = "Intersect multiple sorted sets and store the resulting sorted set in a new key",
     .complexity = "O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K "
                   "being the number of input sorted sets and M being the number of elements in "
                   "the resulting sorted set.",
     .syntax = "destination<key> numkeys<integer> key<key:1>... [WEIGHTS=weight<integer>]... "
               "[AGGREGATE=aggregate: SUM | MIN | MAX]",
     .acl_categories = "write sortedset slow",
     .key_specs = "OW update|1|0|1|0;RO access|2|keynum|0,1,1",
     .find_keys = zsetop_store_keys},
    {.name = "zdiffstore",
     .arity = -4,
     .flags = kWrite | kDenyOom,
     .handler = cmd_zdiffstore,
     .group = "sorted-set",
     .since = "6.2.0",
     .summary = "Subtract multiple sorted sets and store the resulting sorted set in a new key",
     .complexity = "O(L + (N-K)log(N)) worst case where L is the total number of elements in all "
                   "the sets, N is the size of the first set, and K is the size of the result set.",
     .syntax = "destination<key> numkeys<integer> key<key:1>...",
     .acl_categories = "write sortedset slow",
     .key_specs = "OW update|1|0|1|0;RO access|2|keynum|0,1,1",
     .find_keys = zsetop_store_keys},
    {.name = "zunion",
     .arity = -3,
     .flags = kReadonly,
     .handler = cmd_zunion,
     .group = "sorted-set",
     .since = "6.2.0",
     .summary = "Add multiple sorted sets",
     .complexity = "O(N)+O(M*log(M)) with N being the sum of the sizes of the input sorted sets, "
                   "and M being the number of elements in the resulting sorted set.",
     .syntax = "numkeys<integer> key<key>... [WEIGHTS=weight<integer>]... [AGGREGATE=aggregate: "
               "SUM | MIN | MAX] [WITHSCORES]",
     .acl_categories = "read sortedset slow",
     .key_specs = "RO access|1|keynum|0,1,1",
     .find_keys = zsetop_keys},
    {.name = "zinter",
     .arity = -3,
     .flags = kReadonly,
     .handler = cmd_zinter,
     .group = "sorted-set",
     .since = "6.2.0",
     .summary = "Intersect multiple sorted sets",
     .complexity = "O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K "
                   "being the number of input sorted sets and M being the number of elements in "
                   "the resulting sorted set.",
     .syntax = "numkeys<integer> key<key>... [WEIGHTS=weight<integer>]... [AGGREGATE=aggregate: "
               "SUM | MIN | MAX] [WITHSCORES]",
     .acl_categories = "read sortedset slow",
     .key_specs = "RO access|1|keynum|0,1,1",
     .find_keys = zsetop_keys},
    {.name = "zdiff",
     .arity = -3,
     .flags = kReadonly,
     .handler = cmd_zdiff,
     .group = "sorted-set",
     .since = "6.2.0",
     .summary = "Subtract multiple sorted sets",
     .complexity = "O(L + (N-K)log(N)) worst case where L is the total number of elements in all "
                   "the sets, N is the size of the first set, and K is the size of the result set.",
     .syntax = "numkeys<integer> key<key>... [WITHSCORES]",
     .acl_categories = "read sortedset slow",
     .key_specs = "RO access|1|keynum|0,1,1",
     .find_keys = zsetop_keys},
    {.name = "zintercard",
     .arity = -3,
     .flags = kReadonly,
     .handler = cmd_zintercard,
     .group = "sorted-set",
     .since = "7.0.0",
     .summary = "Intersect multiple sorted sets and return the cardinality of the result",
     .complexity = "O(N*K) worst case with N being the smallest input sorted set, K being the "
                   "number of input sorted sets.",
     .syntax = "numkeys<integer> key<key>... [LIMIT=limit<integer>]",
     .acl_categories = "read sortedset slow",
     .key_specs = "RO access|1|keynum|0,1,1",
     .find_keys = zsetop_keys},
    {.name = "zrangestore",
     .arity = -5,
     .flags = kWrite | kDenyOom,
     .handler = cmd_zrangestore,
     .group = "sorted-set",
     .since = "6.2.0",
     .summary = "Store a range of members from sorted set into another key",
     .complexity = "O(log(N)+M) with N being the number of elements in the sorted set and M the "
                   "number of elements stored into the destination key.",
     .syntax = "dst<key> src<key:1> min max [sortby: BYSCORE | BYLEX] [REV] "
               "[LIMIT=offset_count: offset<integer> count<integer>]",
     .acl_categories = "write sortedset slow",
     .key_specs = "OW update|1|0|1|0;RO access|2|0|1|0"},
};

}  // namespace

std::span<const CommandSpec> zset_combine_commands() { return kZsetCombineCommands; }

}  // namespace ringkv::engine
