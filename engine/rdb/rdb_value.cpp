// RDB value encoding and decoding for every type ringkv has (see rdb_value.h), on top of the
// building blocks in rdb_format.h.
#include "engine/rdb/rdb_value.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "engine/commands/string_ops.h"
#include "engine/keyspace/access.h"
#include "engine/rdb/crc64.h"
#include "engine/rdb/rdb_format.h"
#include "engine/rdb/rdb_stream.h"
#include "engine/types/hash_type.h"
#include "engine/types/list_type.h"
#include "engine/types/set_type.h"
#include "engine/types/zset_type.h"

namespace ringkv::engine {
namespace {

using rdb::ListpackWriter;
using rdb::Reader;

// One listpack per node of the list (whose boundaries are Redis's), a node holding one element of
// at least 1 GB (packed_threshold) as a plain node, the nodes beyond list-compress-depth from
// both ends LZF-compressed when Redis would keep them so.
void encode_list(const ListObject& list, std::string& out) {
  out.push_back(static_cast<char>(rdb::kTypeListQuicklist2));
  const size_t nodes = list.node_count();
  rdb::write_len(out, nodes);
  if (nodes == 0) return;
  const size_t depth = static_cast<size_t>(list.compress_depth());
  ListpackWriter lp;
  size_t ni = 0;
  size_t left = list.node_size(0);
  list.walk(0, false, [&](std::string_view element) {
    if (list.node_size(ni) == 1 && element.size() >= kListPlainThreshold) {
      rdb::write_len(out, rdb::kContainerPlain);
      rdb::write_string(out, element);
    } else {
      lp.add(element);
    }
    if (--left > 0) return true;
    if (lp.count() > 0) {
      rdb::write_len(out, rdb::kContainerPacked);
      const std::string blob = lp.finish();
      const bool interior = depth > 0 && ni >= depth && ni + depth < nodes;
      if (!interior || !rdb::write_compressed_node(out, blob)) rdb::write_string(out, blob);
    }
    if (++ni < nodes) left = list.node_size(ni);
    return true;
  });
}

void encode_set(const SetObject& set, std::string& out) {
  if (set.encoding() == SetObject::Encoding::kIntset) {
    std::vector<int64_t> values;
    values.reserve(set.size());
    set.for_each([&](std::string_view member) {
      int64_t v = 0;
      parse_int64(member, v);
      values.push_back(v);
    });
    out.push_back(static_cast<char>(rdb::kTypeSetIntset));
    rdb::write_string(out, rdb::intset_bytes(values));
    return;
  }
  out.push_back(static_cast<char>(rdb::kTypeSet));
  rdb::write_len(out, set.size());
  set.for_each([&](std::string_view member) { rdb::write_string(out, member); });
}

void encode_zset(const ZSetObject& zset, std::string& out) {
  if (zset.encoding() == ZSetObject::Encoding::kListpack) {
    ListpackWriter lp;
    zset.for_each([&](std::string_view member, double score) {
      char buf[32];
      lp.add(member);
      lp.add(rdb::double_to_string(score, buf));
    });
    out.push_back(static_cast<char>(rdb::kTypeZSetListpack));
    rdb::write_string(out, lp.finish());
    return;
  }
  // Highest first, as Redis writes its skiplist (so loading inserts at the head).
  out.push_back(static_cast<char>(rdb::kTypeZSet2));
  rdb::write_len(out, zset.size());
  if (zset.size() == 0) return;
  zset.visit_ranks(zset.size() - 1, zset.size(), true, [&](std::string_view member, double score) {
    rdb::write_string(out, member);
    rdb::write_binary_double(out, score);
  });
}

void encode_hash(const HashObject& hash, std::string& out) {
  if (hash.encoding() == HashObject::Encoding::kListpack) {
    ListpackWriter lp;
    hash.for_each([&](std::string_view field, std::string_view value) {
      lp.add(field);
      lp.add(value);
    });
    out.push_back(static_cast<char>(rdb::kTypeHashListpack));
    rdb::write_string(out, lp.finish());
    return;
  }
  out.push_back(static_cast<char>(rdb::kTypeHash));
  rdb::write_len(out, hash.size());
  hash.for_each([&](std::string_view field, std::string_view value) {
    rdb::write_string(out, field);
    rdb::write_string(out, value);
  });
}

// --- decoding ---

// A score read from a listpack or ziplist entry (zzlGetScore): the text as strtod reads it.
bool parse_packed_score(std::string_view text, double& score) {
  const std::string s(text);
  char* end = nullptr;
  score = std::strtod(s.c_str(), &end);
  return !s.empty() && end == s.c_str() + s.size() && !std::isnan(score);
}

std::unique_ptr<Object> decode_list(uint8_t type, Reader& r) {
  auto list = std::make_unique<ListObject>();
  auto push = [&](std::string_view element) {
    list->push(ListObject::End::kTail, element);
    return true;
  };
  std::string s;
  if (type == rdb::kTypeListZiplist) {
    if (!r.read_string(s) || !rdb::ziplist_for_each(s, push)) return nullptr;
    return list;
  }
  uint64_t len = 0;
  if (!r.read_len(len)) return nullptr;
  // A quicklist's nodes load as they were saved (quicklistAppendListpack), whatever the
  // list-max-listpack-size in force: each node's first element starts a node, whose listpack
  // size is the saved listpack's (a ziplist's or a plain node's is estimated instead).
  bool node_start = true;
  size_t listpack_bytes = 0;
  auto add = [&](std::string_view element) {
    list->append_loaded(element, node_start, listpack_bytes);
    node_start = false;
    return true;
  };
  for (uint64_t i = 0; i < len; ++i) {
    if (type == rdb::kTypeList) {
      if (!r.read_string(s)) return nullptr;
      push(s);
      continue;
    }
    uint64_t container = rdb::kContainerPacked;
    if (type == rdb::kTypeListQuicklist2 && !r.read_len(container)) return nullptr;
    if (!r.read_string(s)) return nullptr;
    node_start = true;
    const bool packed = type == rdb::kTypeListQuicklist2 && container == rdb::kContainerPacked;
    listpack_bytes = packed ? s.size() : 0;
    if (container == rdb::kContainerPlain) {
      add(s);
    } else if (container != rdb::kContainerPacked) {
      return nullptr;
    } else if (type == rdb::kTypeListQuicklist2 ? !rdb::listpack_for_each(s, add)
                                                : !rdb::ziplist_for_each(s, add)) {
      return nullptr;
    }
  }
  return list;
}

std::unique_ptr<Object> decode_set(uint8_t type, Reader& r) {
  auto set = std::make_unique<SetObject>();
  std::string s;
  if (type == rdb::kTypeSetIntset) {
    char buf[24];
    auto add = [&](int64_t v) {
      const auto end = std::to_chars(buf, buf + sizeof(buf), v).ptr;
      return set->add(std::string_view(buf, static_cast<size_t>(end - buf)));
    };
    if (!r.read_string(s) || !rdb::intset_for_each(s, add)) return nullptr;
    return set;
  }
  uint64_t len = 0;
  if (!r.read_len(len)) return nullptr;
  for (uint64_t i = 0; i < len; ++i) {
    // A duplicate member is corrupt data (Redis: "Duplicate set members detected").
    if (!r.read_string(s) || !set->add(s)) return nullptr;
  }
  return set;
}

std::unique_ptr<Object> decode_zset(uint8_t type, Reader& r) {
  std::string s;
  if (type == rdb::kTypeZSetListpack || type == rdb::kTypeZSetZiplist) {
    auto zset = std::make_unique<ZSetObject>();
    std::string member;
    bool have_member = false;
    auto pair = [&](std::string_view element) {
      if (!have_member) {
        member.assign(element);
        have_member = true;
        return true;
      }
      have_member = false;
      double score = 0;
      return parse_packed_score(element, score) && zset->set(member, score);
    };
    if (!r.read_string(s)) return nullptr;
    const bool walked = type == rdb::kTypeZSetListpack ? rdb::listpack_for_each(s, pair)
                                                       : rdb::ziplist_for_each(s, pair);
    if (!walked || have_member) return nullptr;
    return zset;
  }
  uint64_t len = 0;
  if (!r.read_len(len)) return nullptr;
  auto zset = std::make_unique<ZSetObject>(len > encoding_limits().zset_max_listpack_entries
                                               ? ZSetObject::Encoding::kSkiplist
                                               : ZSetObject::Encoding::kListpack);
  for (uint64_t i = 0; i < len; ++i) {
    double score = 0;
    if (!r.read_string(s)) return nullptr;
    const bool read =
        type == rdb::kTypeZSet2 ? r.read_binary_double(score) : r.read_text_double(score);
    // NaN scores and duplicate members are corrupt data, as Redis says.
    if (!read || std::isnan(score) || !zset->set(s, score)) return nullptr;
  }
  return zset;
}

std::unique_ptr<Object> decode_hash(uint8_t type, Reader& r) {
  auto hash = std::make_unique<HashObject>();
  std::string s;
  if (type != rdb::kTypeHash) {
    std::string field;
    bool have_field = false;
    auto pair = [&](std::string_view element) {
      if (!have_field) {
        field.assign(element);
        have_field = true;
        return true;
      }
      have_field = false;
      return hash->set(field, element);
    };
    if (!r.read_string(s)) return nullptr;
    const bool walked = type == rdb::kTypeHashListpack  ? rdb::listpack_for_each(s, pair)
                        : type == rdb::kTypeHashZiplist ? rdb::ziplist_for_each(s, pair)
                                                        : rdb::zipmap_for_each(s, pair);
    if (!walked || have_field) return nullptr;
    return hash;
  }
  uint64_t len = 0;
  if (!r.read_len(len)) return nullptr;
  std::string value;
  for (uint64_t i = 0; i < len; ++i) {
    // A duplicate field is corrupt data (Redis: "Duplicate hash fields detected").
    if (!r.read_string(s) || !r.read_string(value) || !hash->set(s, value)) return nullptr;
  }
  return hash;
}

}  // namespace

void encode_value(const Entry& entry, std::string& out) {
  switch (entry.type()) {
    case ValueType::kString:
      out.push_back(static_cast<char>(rdb::kTypeString));
      rdb::write_string(out, entry.string_value());
      break;
    case ValueType::kList:
      encode_list(static_cast<const ListObject&>(*entry.object()), out);
      break;
    case ValueType::kSet:
      encode_set(static_cast<const SetObject&>(*entry.object()), out);
      break;
    case ValueType::kZSet:
      encode_zset(static_cast<const ZSetObject&>(*entry.object()), out);
      break;
    case ValueType::kHash:
      encode_hash(static_cast<const HashObject&>(*entry.object()), out);
      break;
    case ValueType::kStream:
      encode_stream(static_cast<const StreamObject&>(*entry.object()), out);
      break;
  }
}

void encode_key_value(const Entry& entry, std::string& out) {
  // The type byte comes first, but the encoders choose it while they write the value: the key is
  // slipped in after it.
  const size_t type_at = out.size();
  encode_value(entry, out);
  std::string key;
  rdb::write_string(key, entry.key());
  out.insert(type_at + 1, key);
}

void append_dump_footer(std::string& out) {
  out.push_back(static_cast<char>(rdb::kVersion & 0xff));
  out.push_back(static_cast<char>(rdb::kVersion >> 8));
  const uint64_t crc = crc64(0, out);
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
}

std::string dump_payload(const Entry& entry) {
  std::string out;
  encode_value(entry, out);
  append_dump_footer(out);
  return out;
}

bool verify_dump_payload(std::string_view payload) {
  if (payload.size() < 10) return false;
  const auto* footer = reinterpret_cast<const unsigned char*>(payload.data()) + payload.size() - 10;
  const unsigned version = footer[1] << 8 | footer[0];
  if (version > rdb::kVersion) return false;
  uint64_t crc = 0;
  for (int i = 7; i >= 0; --i) crc = crc << 8 | footer[2 + i];
  return crc64(0, payload.substr(0, payload.size() - 8)) == crc;
}

bool decode_value(std::string_view data, DecodedValue& out) {
  Reader r(data);
  uint8_t type = 0;
  return r.read_byte(type) && decode_value_of_type(type, r, out);
}

bool is_value_type(uint8_t type) {
  switch (type) {
    case rdb::kTypeString:
    case rdb::kTypeList:
    case rdb::kTypeListZiplist:
    case rdb::kTypeListQuicklist:
    case rdb::kTypeListQuicklist2:
    case rdb::kTypeSet:
    case rdb::kTypeSetIntset:
    case rdb::kTypeZSet:
    case rdb::kTypeZSet2:
    case rdb::kTypeZSetZiplist:
    case rdb::kTypeZSetListpack:
    case rdb::kTypeHash:
    case rdb::kTypeHashZipmap:
    case rdb::kTypeHashZiplist:
    case rdb::kTypeHashListpack:
    case rdb::kTypeStreamListpacks:
    case rdb::kTypeStreamListpacks2:
      return true;
    default:
      return false;
  }
}

bool decode_value_of_type(uint8_t type, Reader& r, DecodedValue& out) {
  std::unique_ptr<Object> object;
  switch (type) {
    case rdb::kTypeString:
      out.type = ValueType::kString;
      return r.read_string(out.string);
    case rdb::kTypeList:
    case rdb::kTypeListZiplist:
    case rdb::kTypeListQuicklist:
    case rdb::kTypeListQuicklist2:
      object = decode_list(type, r);
      break;
    case rdb::kTypeSet:
    case rdb::kTypeSetIntset:
      object = decode_set(type, r);
      break;
    case rdb::kTypeZSet:
    case rdb::kTypeZSet2:
    case rdb::kTypeZSetZiplist:
    case rdb::kTypeZSetListpack:
      object = decode_zset(type, r);
      break;
    case rdb::kTypeHash:
    case rdb::kTypeHashZipmap:
    case rdb::kTypeHashZiplist:
    case rdb::kTypeHashListpack:
      object = decode_hash(type, r);
      break;
    case rdb::kTypeStreamListpacks:
    case rdb::kTypeStreamListpacks2:
      object = decode_stream(type, r);
      break;
    default:
      return false;
  }
  // Redis refuses empty collections ("empty keys"); a stream may be empty.
  if (object == nullptr || (object->size() == 0 && object->erase_when_empty())) return false;
  out.type = object->type();
  out.object = std::move(object);
  return true;
}

const Entry* store_decoded(Store& store, std::string_view key, DecodedValue value,
                           int64_t expire_at) {
  if (value.type == ValueType::kString) {
    return store.set_string(key, value.string,
                            expire_at >= 0 ? Expiry::at(expire_at) : Expiry::none());
  }
  const Entry* e = store.add_object(key, std::move(value.object));
  if (expire_at >= 0 && store.set_expire(key, expire_at)) e = store.peek(key);
  return e;
}

void set_loaded_access(Store& store, std::string_view key, int64_t idle_seconds, int64_t freq) {
  if (store.access_policy().lfu) {
    if (freq >= 0) {
      store.set_access_bits(key, lfu_minutes_at(store.now()) << 8 | static_cast<uint32_t>(freq));
    }
    return;
  }
  if (idle_seconds < 0) return;
  int64_t at = static_cast<int64_t>(store.lru_clock()) - idle_seconds;
  if (at < 0) at += kLruClockMax;
  store.set_access_bits(key, static_cast<uint32_t>(at) & kLruClockMax);
}

}  // namespace ringkv::engine
