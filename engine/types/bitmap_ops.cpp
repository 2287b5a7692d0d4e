// Pure bitmap operations (see bitmap_ops.h), following Redis 7.0.15's bitops.c: the same index
// normalisation for ranges, the same overflow arithmetic for BITFIELD, the same lookups (reads
// count hits and misses, writes peek) and "raw" encoding for every value written.
#include "engine/types/bitmap_ops.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "protocol/errors.h"

namespace ringkv::engine {

namespace err = protocol::err;

namespace {

// Set bits in bytes [from, to) of `value`, 8 bytes at a time.
int64_t popcount(const uint8_t* p, size_t n) {
  int64_t count = 0;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t word;
    std::memcpy(&word, p + i, 8);
    count += std::popcount(word);
  }
  for (; i < n; ++i) count += std::popcount(static_cast<unsigned>(p[i]));
  return count;
}

const uint8_t* bytes_of(std::string_view value) {
  return reinterpret_cast<const uint8_t*>(value.data());
}

// Redis's index normalisation of BITCOUNT/BITPOS ranges over `total` units: negative indexes
// count from the end, then both are clamped into [0, total - 1] (end may become -1).
void normalise_range(int64_t total, int64_t& start, int64_t& end) {
  if (start < 0) start += total;
  if (end < 0) end += total;
  if (start < 0) start = 0;
  if (end < 0) end = 0;
  if (end >= total) end = total - 1;
}

// Set bits among bit positions [first, last] of `value` (last < 8 * size).
int64_t count_bit_range(std::string_view value, uint64_t first, uint64_t last) {
  const uint8_t* p = bytes_of(value);
  const uint64_t b0 = first >> 3;
  const uint64_t b1 = last >> 3;
  int64_t count = popcount(p + b0, b1 - b0 + 1);
  // Bits of the edge bytes outside the range.
  const unsigned head = p[b0] & ~((1u << (8 - (first & 7))) - 1) & 0xff;
  const unsigned tail = p[b1] & ((1u << (7 - (last & 7))) - 1);
  return count - std::popcount(head) - std::popcount(tail);
}

// The first bit position in [first, last] equal to `bit`, or -1.
int64_t find_bit_range(std::string_view value, int bit, uint64_t first, uint64_t last) {
  const uint8_t* p = bytes_of(value);
  const uint8_t skip = bit ? 0x00 : 0xff;
  for (uint64_t byte = first >> 3; byte <= (last >> 3); ++byte) {
    // Whole bytes that cannot hold the answer go 8 at a time.
    if ((byte << 3) > first && ((byte + 8) << 3) - 1 <= last) {
      uint64_t word;
      std::memcpy(&word, p + byte, 8);
      if (word == (bit ? 0 : ~uint64_t{0})) {
        byte += 7;
        continue;
      }
    }
    if (p[byte] == skip) continue;
    unsigned candidates = bit ? p[byte] : static_cast<uint8_t>(~p[byte]);
    if ((byte << 3) < first) candidates &= 0xffu >> (first & 7);
    if ((byte << 3) + 7 > last) candidates &= 0xffu << (7 - (last & 7));
    candidates &= 0xff;
    if (candidates != 0) {
      return static_cast<int64_t>((byte << 3) + std::countl_zero(static_cast<uint8_t>(candidates)));
    }
  }
  return -1;
}

// The key's string for a bit write (Redis's lookupStringForBitCommand): created as `byte + 1`
// zero bytes when absent, grown with zero bytes to cover `byte`, then made writable. `grown`
// tells whether it was created or lengthened.
Result<std::span<uint8_t>> bit_target(Store& store, std::string_view key, uint64_t byte,
                                      bool& grown) {
  const Entry* e = store.peek(key);
  if (e != nullptr && e->type() != ValueType::kString) return Error{err::kWrongType};
  grown = false;
  if (e == nullptr) {
    store.set_string(key, std::string(byte + 1, '\0'), Expiry::none(), StringEncoding::kRaw);
    grown = true;
  } else if (e->string_value().size() < byte + 1) {
    store.append_string(key, std::string(byte + 1 - e->string_value().size(), '\0'));
    grown = true;
  }
  return writable_string(store, key);
}

}  // namespace

std::span<uint8_t> writable_string(Store& store, std::string_view key) {
  const Entry* e = store.peek(key);
  if (e->encoding() != StringEncoding::kRaw) {
    const std::string copy(e->string_value());
    e = store.set_string(key, copy, Expiry::keep(), StringEncoding::kRaw);
  }
  std::string_view v = e->string_value();
  // The block is the store's own heap memory, never a const object.
  return {reinterpret_cast<uint8_t*>(const_cast<char*>(v.data())), v.size()};
}

Result<uint64_t> parse_bit_offset(std::string_view arg, int hash_bits, const BulkLimit& limit) {
  const bool hash = hash_bits > 0 && !arg.empty() && arg[0] == '#';
  int64_t offset = 0;
  if (!parse_int64(arg.substr(hash ? 1 : 0), offset)) return Error{err::kBitOffset};
  // "#N" multiplies as Redis's long long arithmetic does on overflow: it wraps.
  if (hash) {
    offset = static_cast<int64_t>(static_cast<uint64_t>(offset) * static_cast<uint64_t>(hash_bits));
  }
  if (offset < 0) return Error{err::kBitOffset};
  const uint64_t bytes = static_cast<uint64_t>(offset) >> 3;
  if (bytes >= static_cast<uint64_t>(kMinProtoMaxBulkLen) &&
      bytes >= static_cast<uint64_t>(limit ? limit() : kProtoMaxBulkLen)) {
    return Error{err::kBitOffset};
  }
  return static_cast<uint64_t>(offset);
}

std::optional<BitUnit> parse_bit_unit(std::string_view arg) {
  arg = common::c_string(arg);
  if (equals_ignore_case(arg, "bit")) return BitUnit::kBit;
  if (equals_ignore_case(arg, "byte")) return BitUnit::kByte;
  return std::nullopt;
}

int bit_at(std::string_view value, uint64_t offset) {
  const uint64_t byte = offset >> 3;
  if (byte >= value.size()) return 0;
  return (bytes_of(value)[byte] >> (7 - (offset & 7))) & 1;
}

int64_t count_bits(std::string_view value) { return popcount(bytes_of(value), value.size()); }

int64_t count_bits(std::string_view value, int64_t start, int64_t end, BitUnit unit) {
  if (start < 0 && end < 0 && start > end) return 0;
  const int64_t total = static_cast<int64_t>(value.size()) * (unit == BitUnit::kBit ? 8 : 1);
  normalise_range(total, start, end);
  if (start > end) return 0;
  const uint64_t scale = unit == BitUnit::kBit ? 1 : 8;
  const uint64_t first = static_cast<uint64_t>(start) * scale;
  const uint64_t last = static_cast<uint64_t>(end) * scale + (scale - 1);
  return count_bit_range(value, first, last);
}

int64_t find_bit(std::string_view value, int bit, int64_t start, std::optional<int64_t> end,
                 BitUnit unit) {
  const int64_t total = static_cast<int64_t>(value.size()) * (unit == BitUnit::kBit ? 8 : 1);
  int64_t stop = end ? *end : total - 1;
  normalise_range(total, start, stop);
  if (start > stop) return -1;
  const uint64_t scale = unit == BitUnit::kBit ? 1 : 8;
  const uint64_t first = static_cast<uint64_t>(start) * scale;
  const uint64_t last = static_cast<uint64_t>(stop) * scale + (scale - 1);
  const int64_t pos = find_bit_range(value, bit, first, last);
  // Without an explicit end the value is padded with zeros on the right.
  if (pos == -1 && bit == 0 && !end) return static_cast<int64_t>(last + 1);
  return pos;
}

std::optional<BitOp> parse_bit_op(std::string_view arg) {
  arg = common::c_string(arg);
  if (equals_ignore_case(arg, "and")) return BitOp::kAnd;
  if (equals_ignore_case(arg, "or")) return BitOp::kOr;
  if (equals_ignore_case(arg, "xor")) return BitOp::kXor;
  if (equals_ignore_case(arg, "not")) return BitOp::kNot;
  return std::nullopt;
}

std::string bit_op(BitOp op, std::span<const std::string_view> sources) {
  size_t max_len = 0;
  for (std::string_view s : sources) max_len = std::max(max_len, s.size());
  std::string out(max_len, '\0');
  if (max_len == 0 || sources.empty()) return out;
  if (op == BitOp::kNot) {
    for (size_t i = 0; i < max_len; ++i) out[i] = static_cast<char>(~sources[0][i]);
    return out;
  }
  // A missing source key is an empty view whose data() may be null: memcpy must not see it.
  if (!sources[0].empty()) std::memcpy(out.data(), sources[0].data(), sources[0].size());
  for (size_t j = 1; j < sources.size(); ++j) {
    std::string_view s = sources[j];
    for (size_t i = 0; i < max_len; ++i) {
      const char b = i < s.size() ? s[i] : '\0';
      if (op == BitOp::kAnd) {
        out[i] &= b;
      } else if (op == BitOp::kOr) {
        out[i] |= b;
      } else {
        out[i] ^= b;
      }
    }
  }
  return out;
}

Result<int> set_bit(Store& store, std::string_view key, uint64_t offset, bool on, bool& changed) {
  bool grown = false;
  auto bytes = bit_target(store, key, offset >> 3, grown);
  if (!bytes) return Error{bytes.error()};
  uint8_t& byte = (*bytes)[offset >> 3];
  const unsigned shift = 7 - (offset & 7);
  const int old = (byte >> shift) & 1;
  changed = grown || old != static_cast<int>(on);
  if (changed) byte = static_cast<uint8_t>((byte & ~(1u << shift)) | (unsigned{on} << shift));
  return old;
}

Result<size_t> bit_op_store(Store& store, BitOp op, std::string_view dest,
                            std::span<const std::string_view> keys, bool& changed) {
  changed = false;
  std::vector<std::string_view> sources;
  sources.reserve(keys.size());
  for (std::string_view key : keys) {
    const Entry* e = store.lookup(key);
    if (e == nullptr) {
      sources.emplace_back();
      continue;
    }
    if (e->type() != ValueType::kString) return Error{err::kWrongType};
    sources.push_back(e->string_value());
  }
  // The views point into the store, which the write below changes: compute first.
  const std::string result = bit_op(op, sources);
  if (result.empty()) {
    changed = store.erase(dest);
  } else {
    store.set_string(dest, result, Expiry::none(), StringEncoding::kRaw);
    changed = true;
  }
  return result.size();
}

// --- BITFIELD ---

Result<std::vector<BitfieldOp>> parse_bitfield(std::span<const std::string_view> args,
                                               const BulkLimit& limit) {
  std::vector<BitfieldOp> ops;
  BitfieldOverflow overflow = BitfieldOverflow::kWrap;
  for (size_t j = 0; j < args.size(); ++j) {
    const size_t remaining = args.size() - j - 1;
    std::string_view sub = common::c_string(args[j]);
    BitfieldOp op;
    if (equals_ignore_case(sub, "get") && remaining >= 2) {
      op.kind = BitfieldOp::kGet;
    } else if (equals_ignore_case(sub, "set") && remaining >= 3) {
      op.kind = BitfieldOp::kSet;
    } else if (equals_ignore_case(sub, "incrby") && remaining >= 3) {
      op.kind = BitfieldOp::kIncrBy;
    } else if (equals_ignore_case(sub, "overflow") && remaining >= 1) {
      std::string_view how = common::c_string(args[++j]);
      if (equals_ignore_case(how, "wrap")) {
        overflow = BitfieldOverflow::kWrap;
      } else if (equals_ignore_case(how, "sat")) {
        overflow = BitfieldOverflow::kSat;
      } else if (equals_ignore_case(how, "fail")) {
        overflow = BitfieldOverflow::kFail;
      } else {
        return Error{err::kBitfieldOverflow};
      }
      continue;
    } else {
      return Error{err::kSyntax};
    }
    // The type: 'i' or 'u' then the width, read as a C string.
    std::string_view type = common::c_string(args[j + 1]);
    int64_t bits = 0;
    if (type.empty() || (type[0] != 'i' && type[0] != 'u')) return Error{err::kBitfieldType};
    op.is_signed = type[0] == 'i';
    if (!parse_int64(type.substr(1), bits) || bits < 1 || bits > (op.is_signed ? 64 : 63)) {
      return Error{err::kBitfieldType};
    }
    op.bits = static_cast<int>(bits);
    auto offset = parse_bit_offset(args[j + 2], op.bits, limit);
    if (!offset) return Error{offset.error()};
    op.offset = *offset;
    if (op.kind != BitfieldOp::kGet && !parse_int64(args[j + 3], op.value)) {
      return Error{err::kNotInteger};
    }
    op.overflow = overflow;
    ops.push_back(op);
    j += op.kind == BitfieldOp::kGet ? 2 : 3;
  }
  return ops;
}

uint64_t get_unsigned_field(std::string_view value, uint64_t offset, int bits) {
  uint64_t field = 0;
  for (int i = 0; i < bits; ++i)
    field = (field << 1) | static_cast<uint64_t>(bit_at(value, offset++));
  return field;
}

int64_t get_signed_field(std::string_view value, uint64_t offset, int bits) {
  uint64_t field = get_unsigned_field(value, offset, bits);
  if (bits < 64 && (field & (uint64_t{1} << (bits - 1)))) field |= ~uint64_t{0} << bits;
  return static_cast<int64_t>(field);
}

void set_field(std::span<uint8_t> bytes, uint64_t offset, int bits, uint64_t field) {
  for (int i = 0; i < bits; ++i, ++offset) {
    const unsigned bit = (field >> (bits - 1 - i)) & 1;
    uint8_t& byte = bytes[offset >> 3];
    const unsigned shift = 7 - (offset & 7);
    byte = static_cast<uint8_t>((byte & ~(1u << shift)) | (bit << shift));
  }
}

int unsigned_field_overflow(uint64_t value, int64_t incr, int bits, BitfieldOverflow how,
                            uint64_t& limit) {
  const uint64_t max = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  const int64_t max_incr = static_cast<int64_t>(max - value);
  const int64_t min_incr = static_cast<int64_t>(uint64_t{0} - value);
  int result = 0;
  if (value > max || (incr > 0 && incr > max_incr)) {
    result = 1;
    if (how == BitfieldOverflow::kSat) limit = max;
  } else if (incr < 0 && incr < min_incr) {
    result = -1;
    if (how == BitfieldOverflow::kSat) limit = 0;
  } else {
    return 0;
  }
  if (how == BitfieldOverflow::kWrap) {
    limit = (value + static_cast<uint64_t>(incr)) & ~(~uint64_t{0} << bits);
    return 1;
  }
  return result;
}

int signed_field_overflow(int64_t value, int64_t incr, int bits, BitfieldOverflow how,
                          int64_t& limit) {
  const int64_t max = bits == 64 ? INT64_MAX : (int64_t{1} << (bits - 1)) - 1;
  const int64_t min = -max - 1;
  // Computed with wrapping arithmetic, as Redis; used only where they cannot have wrapped.
  const int64_t max_incr =
      static_cast<int64_t>(static_cast<uint64_t>(max) - static_cast<uint64_t>(value));
  const int64_t min_incr =
      static_cast<int64_t>(static_cast<uint64_t>(min) - static_cast<uint64_t>(value));
  int result = 0;
  if (value > max || (bits != 64 && incr > max_incr) ||
      (value >= 0 && incr > 0 && incr > max_incr)) {
    result = 1;
    if (how == BitfieldOverflow::kSat) limit = max;
  } else if (value < min || (bits != 64 && incr < min_incr) ||
             (value < 0 && incr < 0 && incr < min_incr)) {
    result = -1;
    if (how == BitfieldOverflow::kSat) limit = min;
  } else {
    return 0;
  }
  if (how == BitfieldOverflow::kWrap) {
    uint64_t c = static_cast<uint64_t>(value) + static_cast<uint64_t>(incr);
    if (bits < 64) {
      const uint64_t mask = ~uint64_t{0} << bits;
      c = (c & (uint64_t{1} << (bits - 1))) ? (c | mask) : (c & ~mask);
    }
    limit = static_cast<int64_t>(c);
    return 1;
  }
  return result;
}

Result<std::vector<std::optional<int64_t>>> bitfield(Store& store, std::string_view key,
                                                     std::span<const BitfieldOp> ops,
                                                     size_t& changed) {
  changed = 0;
  uint64_t highest = 0;
  bool readonly = true;
  for (const BitfieldOp& op : ops) {
    if (op.kind == BitfieldOp::kGet) continue;
    readonly = false;
    highest = std::max(highest, op.offset + static_cast<uint64_t>(op.bits) - 1);
  }
  std::string_view value;
  std::span<uint8_t> bytes;
  bool grown = false;
  if (readonly) {
    const Entry* e = store.lookup(key);
    if (e != nullptr && e->type() != ValueType::kString) return Error{err::kWrongType};
    if (e != nullptr) value = e->string_value();
  } else {
    auto target = bit_target(store, key, highest >> 3, grown);
    if (!target) return Error{target.error()};
    bytes = *target;
    value = std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }
  std::vector<std::optional<int64_t>> replies;
  replies.reserve(ops.size());
  for (const BitfieldOp& op : ops) {
    if (op.kind == BitfieldOp::kGet) {
      replies.emplace_back(
          op.is_signed ? get_signed_field(value, op.offset, op.bits)
                       : static_cast<int64_t>(get_unsigned_field(value, op.offset, op.bits)));
      continue;
    }
    int overflow = 0;
    uint64_t old_field = 0;
    uint64_t stored = 0;
    int64_t reply = 0;
    if (op.is_signed) {
      const int64_t old = get_signed_field(value, op.offset, op.bits);
      old_field = static_cast<uint64_t>(old);
      int64_t wrapped = 0;
      int64_t next = 0;
      if (op.kind == BitfieldOp::kIncrBy) {
        overflow = signed_field_overflow(old, op.value, op.bits, op.overflow, wrapped);
        next = overflow ? wrapped
                        : static_cast<int64_t>(static_cast<uint64_t>(old) +
                                               static_cast<uint64_t>(op.value));
        reply = next;
      } else {
        next = op.value;
        overflow = signed_field_overflow(next, 0, op.bits, op.overflow, wrapped);
        if (overflow) next = wrapped;
        reply = old;
      }
      stored = static_cast<uint64_t>(next);
    } else {
      const uint64_t old = get_unsigned_field(value, op.offset, op.bits);
      old_field = old;
      uint64_t wrapped = 0;
      uint64_t next = 0;
      if (op.kind == BitfieldOp::kIncrBy) {
        next = old + static_cast<uint64_t>(op.value);
        overflow = unsigned_field_overflow(old, op.value, op.bits, op.overflow, wrapped);
        if (overflow) next = wrapped;
        reply = static_cast<int64_t>(next);
      } else {
        next = static_cast<uint64_t>(op.value);
        overflow = unsigned_field_overflow(next, 0, op.bits, op.overflow, wrapped);
        if (overflow) next = wrapped;
        reply = static_cast<int64_t>(old);
      }
      stored = next;
    }
    if (overflow && op.overflow == BitfieldOverflow::kFail) {
      replies.emplace_back(std::nullopt);
      continue;
    }
    replies.emplace_back(reply);
    set_field(bytes, op.offset, op.bits, stored);
    // A write counts when the value was created or grown, or the field changed (Redis 7.0).
    if (grown || old_field != stored) ++changed;
  }
  // Writes that all failed (OVERFLOW FAIL) still leave a key created or grown for them. Redis
  // neither signals nor logs that, so its own append-only file loses the key; counting it keeps
  // ringkv's log true (a WATCH of that key fails where Redis's EXEC would run).
  if (changed == 0 && grown) changed = 1;
  return replies;
}

}  // namespace ringkv::engine
