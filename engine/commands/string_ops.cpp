// Pure string operations on the Store and Redis-exact number parsing/formatting (see
// string_ops.h). Lookups follow Redis: reads go through Store::lookup (hit/miss counters), the
// existence checks of write commands through Store::peek, as lookupKeyWrite does not count.
#include "engine/commands/string_ops.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <string>

#include "common/numbers.h"
#include "protocol/errors.h"

namespace ringkv::engine {

namespace err = protocol::err;

namespace {

// Redis's MAX_LONG_DOUBLE_CHARS: the longest text string2ld accepts (exclusive).
constexpr size_t kMaxLongDoubleChars = 5 * 1024;

// Redis's OBJ_ENCODING_EMBSTR_SIZE_LIMIT: created strings up to this length are embstr.
constexpr size_t kEmbstrSizeLimit = 44;

// The integer a stored string holds, 0 for an absent key (getLongLongFromObject).
bool entry_int64(const Entry* e, int64_t& out) {
  if (e == nullptr) {
    out = 0;
    return true;
  }
  return parse_int64(e->string_value(), out);
}

bool entry_long_double(const Entry* e, long double& out) {
  if (e == nullptr) {
    out = 0;
    return true;
  }
  return parse_long_double(e->string_value(), out);
}

// APPEND/SETRANGE's guard (checkStringLength): the result may not pass proto-max-bulk-len.
bool fits_bulk_limit(uint64_t size, uint64_t extra, const BulkLimit& limit) {
  uint64_t total = size + extra;
  if (total < size) return false;
  if (total <= static_cast<uint64_t>(kMinProtoMaxBulkLen)) return true;
  return total <= static_cast<uint64_t>(limit ? limit() : kProtoMaxBulkLen);
}

}  // namespace

bool parse_int64(std::string_view s, int64_t& out) {
  std::optional<int64_t> v = common::parse_integer(s);
  if (v) out = *v;
  return v.has_value();
}

bool parse_long_double(std::string_view s, long double& out) {
  if (s.empty() || s.size() >= kMaxLongDoubleChars) return false;
  // strtold needs a terminated copy; the end check below rejects an embedded NUL, as Redis does.
  char buf[kMaxLongDoubleChars];
  std::memcpy(buf, s.data(), s.size());
  buf[s.size()] = '\0';
  char* end = nullptr;
  errno = 0;
  long double value = std::strtold(buf, &end);
  bool range_error = errno == ERANGE && (std::isinf(value) || value == 0.0L);
  if (std::isspace(static_cast<unsigned char>(buf[0])) || end != buf + s.size() || range_error ||
      errno == EINVAL || std::isnan(value)) {
    return false;
  }
  out = value;
  return true;
}

std::string format_long_double(long double value) {
  // "%.17Lf" of the largest finite long double is under 5000 characters.
  char buf[kMaxLongDoubleChars];
  int n = std::snprintf(buf, sizeof(buf), "%.17Lf", value);
  std::string_view text(buf, static_cast<size_t>(n));
  if (text.find('.') != std::string_view::npos) {
    while (text.back() == '0') text.remove_suffix(1);
    if (text.back() == '.') text.remove_suffix(1);
  }
  if (text == "-0") return "0";
  return std::string(text);
}

Result<StringSetOptions> parse_string_set_options(std::span<const std::string_view> args,
                                                  SetOptionsFor which) {
  StringSetOptions o;
  const bool for_set = which == SetOptionsFor::kSet;
  using E = ExpireOption;
  for (size_t j = 0; j < args.size(); ++j) {
    std::string_view opt = common::c_string(args[j]);
    const bool has_next = j + 1 < args.size();
    const E ex = o.expire;
    if (for_set && equals_ignore_case(opt, "nx") && !o.xx) {
      o.nx = true;
    } else if (for_set && equals_ignore_case(opt, "xx") && !o.nx) {
      o.xx = true;
    } else if (for_set && equals_ignore_case(opt, "get")) {
      o.get = true;
    } else if (for_set && equals_ignore_case(opt, "keepttl") && ex == E::kNone) {
      o.keep_ttl = true;
    } else if (!for_set && equals_ignore_case(opt, "persist") && ex == E::kNone) {
      o.persist = true;
    } else if (has_next && !o.keep_ttl && !o.persist &&
               ((equals_ignore_case(opt, "ex") && (ex == E::kNone || ex == E::kEx)) ||
                (equals_ignore_case(opt, "px") && (ex == E::kNone || ex == E::kPx)) ||
                (equals_ignore_case(opt, "exat") && (ex == E::kNone || ex == E::kExat)) ||
                (equals_ignore_case(opt, "pxat") && (ex == E::kNone || ex == E::kPxat)))) {
      const char first = static_cast<char>(opt[0] | 0x20);
      const bool at = opt.size() == 4;
      o.expire = first == 'e' ? (at ? E::kExat : E::kEx) : (at ? E::kPxat : E::kPx);
      o.expire_arg = args[++j];
    } else {
      return Error{err::kSyntax};
    }
  }
  return o;
}

Result<int64_t> resolve_expire_ms(ExpireOption option, std::string_view arg, int64_t now_ms) {
  int64_t ms = 0;
  if (!parse_int64(arg, ms)) return Error{err::kNotInteger};
  const bool seconds = option == ExpireOption::kEx || option == ExpireOption::kExat;
  if (ms <= 0 || (seconds && ms > std::numeric_limits<int64_t>::max() / 1000)) {
    return Error{err::kInvalidExpireTime};
  }
  if (seconds) ms *= 1000;
  if (option == ExpireOption::kEx || option == ExpireOption::kPx) {
    if (__builtin_add_overflow(ms, now_ms, &ms)) return Error{err::kInvalidExpireTime};
  }
  if (ms <= 0) return Error{err::kInvalidExpireTime};
  return ms;
}

Result<const Entry*> lookup_string(Store& store, std::string_view key) {
  const Entry* e = store.lookup(key);
  if (e != nullptr && e->type() != ValueType::kString) return Error{err::kWrongType};
  return e;
}

Result<SetOutcome> set_value(Store& store, std::string_view key, std::string_view value,
                             const StringSetOptions& options, Expiry expiry) {
  SetOutcome out;
  if (!options.get && !options.nx && !options.xx) {
    // Nothing depends on the old value: set_string's own lookup is the only one.
    store.set_string(key, value, expiry);
    out.written = true;
    return out;
  }
  const Entry* e = nullptr;
  if (options.get) {
    auto old = lookup_string(store, key);
    if (!old) return Error{old.error()};
    e = *old;
    if (e != nullptr) out.old_value.emplace(e->string_value());
  } else {
    e = store.peek(key);
  }
  const bool found = e != nullptr;
  if ((options.nx && found) || (options.xx && !found)) return out;
  store.set_string(key, value, expiry);
  out.written = true;
  return out;
}

Result<std::optional<std::string>> get_set(Store& store, std::string_view key,
                                           std::string_view value) {
  auto e = lookup_string(store, key);
  if (!e) return Error{e.error()};
  std::optional<std::string> old;
  if (*e != nullptr) old.emplace((*e)->string_value());
  store.set_string(key, value, Expiry::none());
  return old;
}

Result<std::optional<std::string>> get_del(Store& store, std::string_view key) {
  auto e = lookup_string(store, key);
  if (!e) return Error{e.error()};
  if (*e == nullptr) return std::optional<std::string>();
  std::optional<std::string> old((*e)->string_value());
  store.erase(key);
  return old;
}

Result<std::optional<std::string>> get_ex(Store& store, std::string_view key,
                                          const StringSetOptions& options) {
  auto e = lookup_string(store, key);
  if (!e) return Error{e.error()};
  if (*e == nullptr) return std::optional<std::string>();
  int64_t at_ms = 0;
  if (options.expire != ExpireOption::kNone) {
    auto resolved = resolve_expire_ms(options.expire, options.expire_arg, store.now());
    if (!resolved) return Error{resolved.error()};
    at_ms = *resolved;
  }
  std::optional<std::string> value((*e)->string_value());
  const bool absolute =
      options.expire == ExpireOption::kExat || options.expire == ExpireOption::kPxat;
  if (absolute && store.already_expired(at_ms)) {
    // Redis deletes outright here (not an expiration: expired_keys is not counted).
    store.erase(key);
  } else if (options.expire != ExpireOption::kNone) {
    store.set_expire(key, at_ms);
  } else if (options.persist) {
    store.persist(key);
  }
  return value;
}

bool set_many(Store& store, std::span<const std::string_view> key_values, bool only_if_none_exist,
              const std::function<void(std::string_view key)>& written) {
  if (only_if_none_exist) {
    for (size_t i = 0; i + 1 < key_values.size(); i += 2) {
      if (store.peek(key_values[i]) != nullptr) return false;
    }
  }
  for (size_t i = 0; i + 1 < key_values.size(); i += 2) {
    store.set_string(key_values[i], key_values[i + 1], Expiry::none());
    if (written) written(key_values[i]);
  }
  return true;
}

Result<int64_t> incr_by(Store& store, std::string_view key, int64_t delta) {
  const Entry* e = store.peek(key);
  if (e != nullptr && e->type() != ValueType::kString) return Error{err::kWrongType};
  int64_t value = 0;
  if (!entry_int64(e, value)) return Error{err::kNotInteger};
  int64_t result = 0;
  if (__builtin_add_overflow(value, delta, &result)) return Error{err::kOverflow};
  store.set_string(key, std::to_string(result), Expiry::keep(), StringEncoding::kInt);
  return result;
}

Result<std::string> incr_by_float(Store& store, std::string_view key, std::string_view increment) {
  const Entry* e = store.peek(key);
  if (e != nullptr && e->type() != ValueType::kString) return Error{err::kWrongType};
  long double value = 0;
  long double incr = 0;
  if (!entry_long_double(e, value) || !parse_long_double(increment, incr)) {
    return Error{err::kNotFloat};
  }
  value += incr;
  if (std::isnan(value) || std::isinf(value)) return Error{err::kIncrFloatNaN};
  std::string text = format_long_double(value);
  // The result is a freshly created string object: embstr when short, never int.
  const StringEncoding encoding =
      text.size() <= kEmbstrSizeLimit ? StringEncoding::kEmbstr : StringEncoding::kRaw;
  store.set_string(key, text, Expiry::keep(), encoding);
  return text;
}

Result<size_t> append(Store& store, std::string_view key, std::string_view value,
                      const BulkLimit& limit) {
  const Entry* e = store.peek(key);
  if (e == nullptr) {
    store.set_string(key, value, Expiry::none());
    return value.size();
  }
  if (e->type() != ValueType::kString) return Error{err::kWrongType};
  std::string_view old = e->string_value();
  if (!fits_bulk_limit(old.size(), value.size(), limit)) return Error{err::kStringTooLong};
  // Grows the value in place (amortised O(1) per APPEND); it is "raw" afterwards, as in Redis.
  return store.append_string(key, value)->string_value().size();
}

Result<size_t> set_range(Store& store, std::string_view key, int64_t offset, std::string_view value,
                         const BulkLimit& limit) {
  if (offset < 0) return Error{err::kOutOfRangeOffset};
  const uint64_t start = static_cast<uint64_t>(offset);
  const Entry* e = store.peek(key);
  if (e != nullptr && e->type() != ValueType::kString) return Error{err::kWrongType};
  std::string_view old = e != nullptr ? e->string_value() : std::string_view();
  if (value.empty()) return old.size();
  if (!fits_bulk_limit(start, value.size(), limit)) return Error{err::kStringTooLong};
  std::string updated(old);
  if (updated.size() < start + value.size()) updated.resize(start + value.size(), '\0');
  updated.replace(start, value.size(), value);
  store.set_string(key, updated, e != nullptr ? Expiry::keep() : Expiry::none(),
                   StringEncoding::kRaw);
  return updated.size();
}

Result<std::string_view> get_range(Store& store, std::string_view key, int64_t start, int64_t end) {
  auto e = lookup_string(store, key);
  if (!e) return Error{e.error()};
  if (*e == nullptr) return std::string_view();
  std::string_view s = (*e)->string_value();
  const int64_t len = static_cast<int64_t>(s.size());
  if (start < 0 && end < 0 && start > end) return std::string_view();
  if (start < 0) start += len;
  if (end < 0) end += len;
  if (start < 0) start = 0;
  if (end < 0) end = 0;
  if (end >= len) end = len - 1;
  if (start > end || len == 0) return std::string_view();
  return s.substr(static_cast<size_t>(start), static_cast<size_t>(end - start + 1));
}

Result<size_t> str_len(Store& store, std::string_view key) {
  auto e = lookup_string(store, key);
  if (!e) return Error{e.error()};
  return *e == nullptr ? size_t{0} : (*e)->string_value().size();
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

}  // namespace ringkv::engine
