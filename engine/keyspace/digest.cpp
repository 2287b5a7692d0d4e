// Redis's dataset digest (debug.c): a value's digest mixes (SHA1 of digest xor SHA1 of the
// data) its type and then its ordered parts (string, list elements, stream entries), and xors in
// the digests of unordered parts (set members, hash and sorted-set pairs), so a hash's field
// order does not matter but a list's does. A TTL xors in "!!expire!!".
#include "engine/keyspace/digest.h"

#include <arpa/inet.h>
#include <openssl/sha.h>

#include <cstdio>
#include <cstring>

#include "engine/types/hash_type.h"
#include "engine/types/list_type.h"
#include "engine/types/set_type.h"
#include "engine/types/stream_type.h"
#include "engine/types/zset_type.h"

namespace ringkv::engine {
namespace {

void xor_digest(Digest& d, const void* data, size_t len) {
  uint8_t hash[SHA_DIGEST_LENGTH];
  SHA1(static_cast<const unsigned char*>(data), len, hash);
  for (size_t i = 0; i < d.size(); ++i) d[i] ^= hash[i];
}

void xor_digest(Digest& d, std::string_view s) { xor_digest(d, s.data(), s.size()); }

void mix_digest(Digest& d, const void* data, size_t len) {
  xor_digest(d, data, len);
  SHA1(d.data(), d.size(), d.data());
}

void mix_digest(Digest& d, std::string_view s) { mix_digest(d, s.data(), s.size()); }

// Redis's type numbers (OBJ_STREAM is 6: 5 is its modules' type).
uint32_t redis_type(ValueType t) { return t == ValueType::kStream ? 6u : static_cast<uint32_t>(t); }

// The digest of one member and score, as Redis mixes a sorted set's pairs.
void xor_scored(Digest& d, std::string_view member, double score) {
  Digest pair{};
  mix_digest(pair, member);
  char buf[64];
  const int n = std::snprintf(buf, sizeof buf, "%.17g", score);
  mix_digest(pair, buf, static_cast<size_t>(n));
  xor_digest(d, pair.data(), pair.size());
}

void add_value(Digest& d, const Entry& entry) {
  const uint32_t type = htonl(redis_type(entry.type()));
  mix_digest(d, &type, sizeof type);
  switch (entry.type()) {
    case ValueType::kString:
      mix_digest(d, entry.string_value());
      break;
    case ValueType::kList: {
      const auto& list = static_cast<const ListObject&>(*entry.object());
      if (list.size() > 0) {
        list.walk(0, false, [&](std::string_view element) {
          mix_digest(d, element);
          return true;
        });
      }
      break;
    }
    case ValueType::kSet:
      static_cast<const SetObject&>(*entry.object()).for_each([&](std::string_view member) {
        xor_digest(d, member);
      });
      break;
    case ValueType::kZSet:
      static_cast<const ZSetObject&>(*entry.object())
          .for_each([&](std::string_view member, double score) { xor_scored(d, member, score); });
      break;
    case ValueType::kHash:
      static_cast<const HashObject&>(*entry.object())
          .for_each([&](std::string_view field, std::string_view value) {
            Digest pair{};
            mix_digest(pair, field);
            mix_digest(pair, value);
            xor_digest(d, pair.data(), pair.size());
          });
      break;
    case ValueType::kStream:
      static_cast<const StreamObject&>(*entry.object())
          .for_each(kMinStreamID, kMaxStreamID, false, [&](const StreamItem& item) {
            const std::string id = std::to_string(item.id.ms) + "." + std::to_string(item.id.seq);
            mix_digest(d, id);
            item.for_each_string([&](std::string_view s) { mix_digest(d, s); });
            return true;
          });
      break;
  }
  if (entry.has_expire()) xor_digest(d, "!!expire!!");
}

bool parse_hex(std::string_view hex, Digest& out) {
  if (hex.size() != 2 * out.size()) return false;
  for (size_t i = 0; i < out.size(); ++i) {
    auto nibble = [](char c) {
      return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    };
    const int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = static_cast<uint8_t>(hi * 16 + lo);
  }
  return true;
}

// What the first non-empty database mixes into the dataset digest (db 0).
Digest database_mark() {
  Digest mark{};
  const uint32_t db = htonl(0);
  mix_digest(mark, &db, sizeof db);
  return mark;
}

}  // namespace

Digest value_digest(const Entry& entry) {
  Digest d{};
  add_value(d, entry);
  return d;
}

namespace {

// The xor of the digests of a store's live keys (names, values, TTLs); false when it has none.
bool keys_digest(Store& store, Digest& out) {
  out = Digest{};
  if (store.size() == 0) return false;
  bool any = false;
  store.for_each([&](const Entry& entry) {
    any = true;
    Digest d{};
    mix_digest(d, entry.key());
    add_value(d, entry);
    xor_digest(out, d.data(), d.size());
  });
  return any;
}

}  // namespace

Digest dataset_digest(Store& store) {
  Store* const one[] = {&store};
  return dataset_digest(one);
}

Digest dataset_digest(std::span<Store* const> dbs) {
  // As Redis's computeDatasetDigest: each non-empty database mixes its number into the digest
  // so far, then xors its keys in (the same keys in another database digest differently).
  Digest out{};
  for (size_t db = 0; db < dbs.size(); ++db) {
    Digest keys{};
    if (!keys_digest(*dbs[db], keys)) continue;
    const uint32_t id = htonl(static_cast<uint32_t>(db));
    mix_digest(out, &id, sizeof id);
    for (size_t i = 0; i < out.size(); ++i) out[i] ^= keys[i];
  }
  return out;
}

std::string combine_digests(const std::vector<std::string_view>& hex_digests) {
  const Digest mark = database_mark();
  Digest keys{};
  bool any = false;
  for (std::string_view hex : hex_digests) {
    Digest d{};
    if (!parse_hex(hex, d)) return {};
    if (d == Digest{}) continue;  // an empty store
    any = true;
    for (size_t i = 0; i < d.size(); ++i) keys[i] ^= d[i] ^ mark[i];
  }
  if (!any) return digest_hex(Digest{});
  for (size_t i = 0; i < keys.size(); ++i) keys[i] ^= mark[i];
  return digest_hex(keys);
}

std::string digest_hex(const Digest& d) {
  std::string out;
  char buf[3];
  for (uint8_t b : d) {
    std::snprintf(buf, sizeof buf, "%02x", b);
    out += buf;
  }
  return out;
}

}  // namespace ringkv::engine
