// SORT and SORT_RO, as Redis 7.0's sortCommandGeneric: the elements of a list, set or sorted set,
// compared as numbers (strtod of the element or of the BY key's value) or as strings (ALPHA),
// with LIMIT, ASC/DESC, GET patterns ('#', key patterns and hash fields "key*->field") and STORE
// into a list. BY a pattern without '*' sorts nothing (the native order, reversed by DESC for
// lists and sorted sets). In a cluster, BY with a pattern and GET are refused as Redis Cluster
// 7.0 refuses them: the keys they form may live on any node.
#include "engine/commands/sort.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "common/numbers.h"
#include "engine/commands/handler_args.h"
#include "engine/commands/string_ops.h"
#include "engine/key_specs.h"
#include "engine/types/hash_type.h"
#include "engine/types/list_type.h"
#include "engine/types/set_type.h"
#include "engine/types/zset_type.h"
#include "protocol/errors.h"

namespace ringkv::engine {
namespace {

struct Item {
  std::string value;
  double score = 0;
  std::optional<std::string> by;  // ALPHA BY: the BY key's value (none when it is missing)
};

// lookupKeyByPattern: '#' is the element itself; otherwise the first '*' of the pattern is
// replaced by the element, and "->field" after it (with a field name) reads a hash field. Only
// strings (or hash fields) are found. C-string semantics, as Redis's strchr/strstr.
struct Found {
  std::string value;
  bool integer = false;  // stored as an integer (Redis reads it back as an integer object)
};
std::optional<Found> lookup_by_pattern(Store& store, std::string_view pattern,
                                       std::string_view element) {
  const std::string pat(pattern.substr(0, std::min(pattern.size(), std::strlen(pattern.data()))));
  if (pat == "#") return Found{std::string(element)};
  const size_t star = pat.find('*');
  if (star == std::string::npos) return std::nullopt;
  const size_t arrow = pat.find("->", star + 1);
  const bool field = arrow != std::string::npos && arrow + 2 < pat.size();
  const std::string key = pat.substr(0, star) + std::string(element) +
                          pat.substr(star + 1, (field ? arrow : pat.size()) - star - 1);
  const Entry* e = store.lookup(key);
  if (e == nullptr) return std::nullopt;
  if (field) {
    if (e->type() != ValueType::kHash) return std::nullopt;
    const auto* hash = static_cast<const HashObject*>(e->object());
    const std::optional<std::string_view> v = hash->get(pat.substr(arrow + 2));
    if (!v) return std::nullopt;
    // A listpack holds a field's value that reads as an integer as one.
    return Found{std::string(*v), hash->encoding() == HashObject::Encoding::kListpack &&
                                      common::parse_integer(*v).has_value()};
  }
  if (e->type() != ValueType::kString) return std::nullopt;
  return Found{std::string(e->string_value()), e->encoding() == StringEncoding::kInt};
}

// strcoll in the C locale: a C-string comparison.
int collate(const std::string& a, const std::string& b) {
  return std::strcmp(a.c_str(), b.c_str());
}

int binary_compare(std::string_view a, std::string_view b) {
  const int c = a.compare(b);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

void sort_generic(CommandContext& ctx, bool readonly) {
  const auto argv = ctx.argv;
  bool desc = false;
  bool alpha = false;
  bool dontsort = false;
  int64_t limit_start = 0;
  int64_t limit_count = -1;
  std::optional<std::string_view> sortby;
  std::optional<std::string_view> storekey;
  std::vector<std::string_view> gets;
  const bool clustered = ctx.server != nullptr && ctx.server->clustered();
  for (size_t j = 2; j < argv.size(); ++j) {
    const size_t left = argv.size() - j - 1;
    const std::string_view a = argv[j];
    if (equals_ignore_case(a, "asc")) {
      desc = false;
    } else if (equals_ignore_case(a, "desc")) {
      desc = true;
    } else if (equals_ignore_case(a, "alpha")) {
      alpha = true;
    } else if (equals_ignore_case(a, "limit") && left >= 2) {
      if (!int64_or_reply(ctx, argv[j + 1], limit_start) ||
          !int64_or_reply(ctx, argv[j + 2], limit_count)) {
        return;
      }
      j += 2;
    } else if (!readonly && equals_ignore_case(a, "store") && left >= 1) {
      storekey = argv[++j];
    } else if (equals_ignore_case(a, "by") && left >= 1) {
      sortby = argv[++j];
      if (sortby->find('*') == std::string_view::npos) {
        dontsort = true;
      } else if (clustered) {
        ctx.reply.error("ERR BY option of SORT denied in Cluster mode.");
        return;
      }
    } else if (equals_ignore_case(a, "get") && left >= 1) {
      if (clustered) {
        ctx.reply.error("ERR GET option of SORT denied in Cluster mode.");
        return;
      }
      gets.push_back(argv[++j]);
    } else {
      ctx.reply.error(protocol::err::kSyntax);
      return;
    }
  }

  const Entry* entry = ctx.store.lookup(argv[1]);
  ValueType type = ValueType::kList;
  if (entry != nullptr) {
    type = entry->type();
    if (type != ValueType::kSet && type != ValueType::kList && type != ValueType::kZSet) {
      ctx.reply.error(protocol::err::kWrongType);
      return;
    }
  }
  // Redis reads strtod's errno for ERANGE without clearing it, between elements too: the
  // numeric conversion below may start with it set.
  bool erange = false;
  if (type == ValueType::kZSet) {
    // Redis converts the sorted set it sorts to a skiplist, for good (OBJECT ENCODING shows it).
    auto zset = write_object<ZSetObject>(ctx.store, argv[1], false);
    if (zset && zset->get() != nullptr) {
      // A listpack holds each score as text, and converting reads it back with strtod, which
      // sets ERANGE for a subnormal score (its text is never exact).
      if ((*zset)->encoding() == ZSetObject::Encoding::kListpack) {
        (*zset)->for_each([&](std::string_view, double score) {
          if (std::fpclassify(score) == FP_SUBNORMAL) erange = true;
        });
      }
      (*zset)->convert_to_skiplist();
    }
  }
  // A set's order is its table's: sorted as strings where the result must be reproducible.
  if (dontsort && type == ValueType::kSet && (storekey || ctx.from_script)) {
    dontsort = false;
    alpha = true;
    sortby.reset();
  }

  std::vector<Item> items;
  if (entry != nullptr) {
    if (type == ValueType::kList) {
      const auto* list = static_cast<const ListObject*>(entry->object());
      items.reserve(list->size());
      if (list->size() > 0) {
        list->walk(0, false, [&](std::string_view v) {
          items.push_back(Item{std::string(v), 0, std::nullopt});
          return true;
        });
      }
    } else if (type == ValueType::kSet) {
      const auto* set = static_cast<const SetObject*>(entry->object());
      items.reserve(set->size());
      set->for_each([&](std::string_view m) {
        items.push_back(Item{std::string(m), 0, std::nullopt});
      });
    } else {
      const auto* zset = static_cast<const ZSetObject*>(entry->object());
      items.reserve(zset->size());
      zset->for_each([&](std::string_view m, double) {
        items.push_back(Item{std::string(m), 0, std::nullopt});
      });
    }
  }
  const int64_t len = static_cast<int64_t>(items.size());
  int64_t start = limit_start < 0 ? 0 : limit_start;
  int64_t end = limit_count < 0 ? len - 1 : start + limit_count - 1;
  if (start >= len) {
    start = len - 1;
    end = len - 2;
  }
  if (end >= len) end = len - 1;

  if (dontsort) {
    // Lists and sorted sets keep their order, reversed by DESC.
    if (desc && type != ValueType::kSet) std::reverse(items.begin(), items.end());
  } else {
    // errno is read only after a strtod, which a BY value stored as an integer does not need.
    bool conversion_error = false;
    for (Item& item : items) {
      std::optional<Found> by;
      if (sortby) {
        by = lookup_by_pattern(ctx.store, *sortby, item.value);
        if (!by) continue;
      }
      const std::string& source = sortby ? by->value : item.value;
      if (alpha) {
        if (sortby) item.by = std::move(by->value);
      } else {
        char* eptr = nullptr;
        errno = 0;
        item.score = std::strtod(source.c_str(), &eptr);
        if (by && by->integer) continue;
        erange = erange || errno == ERANGE;
        if (*eptr != '\0' || erange || std::isnan(item.score)) conversion_error = true;
      }
    }
    if (conversion_error) {
      ctx.reply.error("ERR One or more scores can't be converted into double");
      return;
    }
    const bool store = storekey.has_value();
    const bool by_pattern = sortby.has_value();
    // glibc's qsort is a merge sort: equal elements keep their order.
    std::stable_sort(items.begin(), items.end(), [&](const Item& a, const Item& b) {
      int cmp = 0;
      if (!alpha) {
        cmp = a.score > b.score ? 1 : a.score < b.score ? -1 : binary_compare(a.value, b.value);
      } else if (by_pattern) {
        if (!a.by || !b.by) {
          cmp = a.by.has_value() == b.by.has_value() ? 0 : (a.by ? 1 : -1);
        } else {
          cmp = store ? binary_compare(*a.by, *b.by) : collate(*a.by, *b.by);
        }
      } else {
        cmp = store ? binary_compare(a.value, b.value) : collate(a.value, b.value);
      }
      return (desc ? -cmp : cmp) < 0;
    });
  }

  const int64_t count = end >= start ? end - start + 1 : 0;
  const int64_t outputlen = gets.empty() ? count : static_cast<int64_t>(gets.size()) * count;
  if (!storekey) {
    ctx.reply.array(static_cast<size_t>(outputlen));
    for (int64_t j = start; j <= end; ++j) {
      const std::string& v = items[static_cast<size_t>(j)].value;
      if (gets.empty()) ctx.reply.bulk(v);
      for (std::string_view pattern : gets) {
        const std::optional<Found> got = lookup_by_pattern(ctx.store, pattern, v);
        if (got) {
          ctx.reply.bulk(got->value);
        } else {
          ctx.reply.null();
        }
      }
    }
    return;
  }
  auto result = std::make_unique<ListObject>();
  for (int64_t j = start; j <= end; ++j) {
    const std::string& v = items[static_cast<size_t>(j)].value;
    if (gets.empty()) result->push(ListObject::End::kTail, v);
    for (std::string_view pattern : gets) {
      const std::optional<Found> got = lookup_by_pattern(ctx.store, pattern, v);
      result->push(ListObject::End::kTail, got ? got->value : std::string());
    }
  }
  const std::string_view dest = *storekey;
  const bool existed = outputlen > 0 ? ctx.store.peek(dest) != nullptr : ctx.store.erase(dest);
  if (outputlen > 0) {
    ctx.store.put_object(dest, std::move(result));
    ctx.key_ready(dest);
    ctx.notify(common::kNotifyList, "sortstore", dest);
  } else if (existed) {
    ctx.notify(common::kNotifyGeneric, "del", dest);
  }
  if (existed || outputlen > 0) ctx.key_modified(dest);
  ctx.reply.integer(outputlen);
}

void cmd_sort(CommandContext& ctx) { sort_generic(ctx, false); }
void cmd_sort_ro(CommandContext& ctx) { sort_generic(ctx, true); }

// sortGetKeys: the sorted key, and STORE's destination (the last one given), skipping the
// arguments of LIMIT, GET and BY.
void sort_keys(std::span<const std::string_view> argv, std::vector<size_t>& positions) {
  if (argv.size() < 2) return;
  positions.push_back(1);
  size_t store = 0;
  for (size_t i = 2; i < argv.size(); ++i) {
    if (equals_ignore_case(argv[i], "limit")) {
      i += 2;
    } else if (equals_ignore_case(argv[i], "get") || equals_ignore_case(argv[i], "by")) {
      i += 1;
    } else if (equals_ignore_case(argv[i], "store") && i + 1 < argv.size()) {
      store = ++i;
    }
  }
  if (store != 0) positions.push_back(store);
}

void sort_ro_keys(std::span<const std::string_view> argv, std::vector<size_t>& positions) {
  if (argv.size() >= 2) positions.push_back(1);
}

// The same keys with their flags: the sorted key is read, STORE's destination written over.
void sort_key_flags(std::span<const std::string_view> argv, std::vector<KeyReference>& keys) {
  std::vector<size_t> positions;
  sort_keys(argv, positions);
  for (size_t i = 0; i < positions.size(); ++i) {
    keys.push_back(KeyReference{
        positions[i], static_cast<uint16_t>(i == 0 ? kKeyRO | kKeyAccess : kKeyOW | kKeyUpdate)});
  }
}

void sort_ro_key_flags(std::span<const std::string_view> argv, std::vector<KeyReference>& keys) {
  if (argv.size() >= 2) keys.push_back(KeyReference{1, kKeyRO | kKeyAccess});
}

constexpr std::string_view kComplexity =
    "O(N+M*log(M)) where N is the number of elements in the list or set to sort, and M the "
    "number of returned elements. When the elements are not sorted, complexity is O(N).";

constexpr CommandSpec kSortCommands[] = {
    {.name = "sort",
     .arity = -2,
     .flags = kWrite | kDenyOom,
     .handler = cmd_sort,
     .group = "generic",
     .since = "1.0.0",
     .summary = "Sort the elements in a list, set or sorted set",
     .complexity = kComplexity,
     .syntax = "key<key> [BY=pattern<pattern:1>] [LIMIT=offset_count: offset<integer> "
               "count<integer>] [GET=pattern<pattern:1>]...+ [order: ASC | DESC] "
               "[sorting:\"ALPHA\"] [STORE=destination<key:2>]",
     .acl_categories = "write set sortedset list slow dangerous",
     .key_specs = "RO access|1|0|1|0;RO access|unknown|unknown|0|0|For the optional BY/GET "
                  "keyword. It is marked 'unknown' because the key names derive from the content "
                  "of the key we sort;OW update|unknown|unknown|0|0|For the optional STORE "
                  "keyword. It is marked 'unknown' because the keyword can appear anywhere in the "
                  "argument array",
     .find_keys = sort_keys,
     .find_key_flags = sort_key_flags},
    {.name = "sort_ro",
     .arity = -2,
     .flags = kReadonly,
     .handler = cmd_sort_ro,
     .group = "generic",
     .since = "7.0.0",
     .summary = "Sort the elements in a list, set or sorted set. Read-only variant of SORT.",
     .complexity = kComplexity,
     .syntax = "key<key> [BY=pattern<pattern:1>] [LIMIT=offset_count: offset<integer> "
               "count<integer>] [GET=pattern<pattern:1>]...+ [order: ASC | DESC] "
               "[sorting:\"ALPHA\"]",
     .acl_categories = "read set sortedset list slow dangerous",
     .key_specs = "RO access|1|0|1|0;RO access|unknown|unknown|0|0|For the optional BY/GET "
                  "keyword. It is marked 'unknown' because the key names derive from the content "
                  "of the key we sort",
     .find_keys = sort_ro_keys,
     .find_key_flags = sort_ro_key_flags},
};

}  // namespace

std::span<const CommandSpec> sort_commands() { return kSortCommands; }

}  // namespace ringkv::engine
