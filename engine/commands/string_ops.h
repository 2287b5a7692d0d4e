// Pure string operations on the Store (no RESP), plus the number parsing and formatting helpers
// that must agree with Redis byte for byte: string2ll, string2ld and INCRBYFLOAT's long double
// formatting. Command handlers (commands/string.cpp, commands/keys.cpp, ...) build on these.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "common/numbers.h"
#include "engine/keyspace/store.h"
#include "engine/result.h"

namespace ringkv::engine {

// Redis's default proto-max-bulk-len: the largest string APPEND and SETRANGE may build.
inline constexpr int64_t kProtoMaxBulkLen = 512LL * 1024 * 1024;
// The smallest proto-max-bulk-len the configuration accepts (as Redis): results up to this size
// never need the configured value.
inline constexpr int64_t kMinProtoMaxBulkLen = 1024 * 1024;

// Supplies the proto-max-bulk-len in force. Asked only when a result is larger than
// kMinProtoMaxBulkLen, since reading the configuration costs more than a small APPEND. An empty
// function means kProtoMaxBulkLen.
using BulkLimit = std::function<int64_t()>;

// Parses a decimal 64-bit integer exactly as Redis's string2ll (and so getLongLongFromObject):
// optional '-', no '+', no spaces, no leading zeros ("0" itself is fine, "-0" is not), no overflow.
// Returns false and leaves `out` alone when `s` is not such a number.
bool parse_int64(std::string_view s, int64_t& out);

// Parses a long double exactly as Redis's string2ld (getLongDoubleFromObject): strtold syntax
// (including "inf", hex floats), no leading space, every byte consumed (an embedded NUL fails), not
// NaN, not overflowing, not underflowing to zero. Returns false when `s` is not such a number.
bool parse_long_double(std::string_view s, long double& out);

// ASCII case-insensitive equality (command names, options).
using common::equals_ignore_case;

// An ASCII-lowercased copy.
std::string to_lower(std::string_view s);

// Formats a finite long double as Redis 7.0 stores INCRBYFLOAT results ("%.17Lf", trailing zeros
// and a trailing '.' removed, "-0" printed as "0").
std::string format_long_double(long double value);

// Which expiry option a SET or GETEX carries.
enum class ExpireOption : uint8_t { kNone, kEx, kPx, kExat, kPxat };

// Options of SET (NX, XX, GET, KEEPTTL, EX/PX/EXAT/PXAT) and GETEX (EX/PX/EXAT/PXAT, PERSIST).
struct StringSetOptions {
  bool nx = false;
  bool xx = false;
  bool get = false;
  bool keep_ttl = false;
  bool persist = false;
  ExpireOption expire = ExpireOption::kNone;
  std::string_view expire_arg;  // the number following EX/PX/EXAT/PXAT
};

// The command whose options parse_string_set_options reads.
enum class SetOptionsFor : uint8_t { kSet, kGetex };

// Parses the option arguments of SET (after key and value) or GETEX (after key) with Redis's
// conflict rules (NX+XX, two different expiry kinds, KEEPTTL or PERSIST with an expiry are syntax
// errors; repeating the same expiry kind keeps the last one). Error: kSyntax.
Result<StringSetOptions> parse_string_set_options(std::span<const std::string_view> args,
                                                  SetOptionsFor which);

// Turns an expiry option and its argument into an absolute unix time in ms, as Redis's
// getExpireMillisecondsOrReply: EX/PX are relative to `now_ms`, EXAT/PXAT absolute.
// Errors: kNotInteger, or kInvalidExpireTime (a '%s' template the caller fills with the command
// name) for a value <= 0 or one that overflows.
Result<int64_t> resolve_expire_ms(ExpireOption option, std::string_view arg, int64_t now_ms);

// Looks a key up for reading a string. nullptr when absent; error kWrongType for another type.
Result<const Entry*> lookup_string(Store& store, std::string_view key);

// What a SET did: whether it wrote, and the previous value when GET was asked.
struct SetOutcome {
  bool written = false;
  std::optional<std::string> old_value;  // with GET: the previous string, nullopt when absent
};

// SET key value with NX/XX/GET/KEEPTTL semantics; `expiry` is applied when the value is written
// (Expiry::keep() for KEEPTTL). With GET a non-string key is an error (kWrongType) and nothing is
// written; without GET any existing key of any type is replaced.
Result<SetOutcome> set_value(Store& store, std::string_view key, std::string_view value,
                             const StringSetOptions& options, Expiry expiry);

// GETSET: replaces the value (dropping any TTL) and returns the previous string (nullopt when
// absent). Error kWrongType leaves the key untouched.
Result<std::optional<std::string>> get_set(Store& store, std::string_view key,
                                           std::string_view value);

// GETDEL: returns the string and deletes the key (nullopt when absent). Error kWrongType.
Result<std::optional<std::string>> get_del(Store& store, std::string_view key);

// GETEX: returns the string (nullopt when absent, in which case the expiry is not validated) and
// then applies the expiry option or PERSIST. An EXAT/PXAT in the past deletes the key.
// Errors: kWrongType, kNotInteger, kInvalidExpireTime (template, see resolve_expire_ms).
Result<std::optional<std::string>> get_ex(Store& store, std::string_view key,
                                          const StringSetOptions& options);

// MSET / MSETNX: sets each (key, value) pair of `key_values` (even length), dropping TTLs. With
// `only_if_none_exist`, writes nothing and returns false when any key exists (of any type).
// `written` runs after each key is set (its events come before the next key's "new", as in Redis).
bool set_many(Store& store, std::span<const std::string_view> key_values, bool only_if_none_exist,
              const std::function<void(std::string_view key)>& written = {});

// Adds `delta` to the integer stored at key (0 when absent), keeping its TTL. Returns the new
// value. Errors: kWrongType, kNotInteger, kOverflow.
Result<int64_t> incr_by(Store& store, std::string_view key, int64_t delta);

// INCRBYFLOAT: adds the increment (text, parsed like the stored value) to the number at key,
// keeping its TTL. Returns the stored text. Errors: kWrongType, kNotFloat, kIncrFloatNaN.
Result<std::string> incr_by_float(Store& store, std::string_view key, std::string_view increment);

// APPEND: returns the new length. Errors: kWrongType, kStringTooLong (result over `limit`).
Result<size_t> append(Store& store, std::string_view key, std::string_view value,
                      const BulkLimit& limit = {});

// SETRANGE: overwrites from `offset`, zero-padding as needed; returns the new length. An empty
// value creates nothing and returns the current length (0 when absent).
// Errors: kOutOfRangeOffset (offset < 0, checked first), kWrongType, kStringTooLong (offset plus
// value length over `limit`).
Result<size_t> set_range(Store& store, std::string_view key, int64_t offset, std::string_view value,
                         const BulkLimit& limit = {});

// GETRANGE: the substring between inclusive indexes (negative counts from the end), empty when
// absent or out of range. The view points into the store until its next write. Error: kWrongType.
Result<std::string_view> get_range(Store& store, std::string_view key, int64_t start, int64_t end);

// STRLEN: the value's length, 0 when absent. Error: kWrongType.
Result<size_t> str_len(Store& store, std::string_view key);

}  // namespace ringkv::engine
