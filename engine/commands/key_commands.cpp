// The commands that recreate one key, written straight into the output buffer: collections are
// walked once with their own iteration API and cut into batches whose size is known up front
// (the element count), so no element is copied or allocated on the way.
#include "engine/commands/key_commands.h"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "engine/types/hash_type.h"
#include "engine/types/list_type.h"
#include "engine/types/object.h"
#include "engine/types/set_type.h"
#include "engine/types/stream_type.h"
#include "engine/types/zset_type.h"
#include "protocol/reply_writer.h"
#include "protocol/request_writer.h"

namespace ringkv::engine {

namespace {

using protocol::append_request_bulk;
using protocol::append_request_header;

// Cuts `total` elements into commands "<name> key elem..." of at most kItemsPerCommand elements,
// each element `args_per_item` arguments. Call add() once per element, writing its arguments
// after it returns.
class Batcher {
 public:
  Batcher(std::string& out, std::string_view name, std::string_view key, size_t total,
          size_t args_per_item)
      : out_(out), name_(name), key_(key), remaining_(total), args_per_item_(args_per_item) {}

  // Starts a new command when the current one is full.
  void add() {
    if (in_batch_ == 0) {
      in_batch_ = std::min(remaining_, kItemsPerCommand);
      remaining_ -= in_batch_;
      append_request_header(out_, 2 + in_batch_ * args_per_item_);
      append_request_bulk(out_, name_);
      append_request_bulk(out_, key_);
    }
    --in_batch_;
  }

 private:
  std::string& out_;
  std::string_view name_;
  std::string_view key_;
  size_t remaining_;
  size_t args_per_item_;
  size_t in_batch_ = 0;
};

void append_list(const Entry& entry, std::string& out) {
  const auto& list = static_cast<const ListObject&>(*entry.object());
  Batcher batch(out, "RPUSH", entry.key(), list.size(), 1);
  list.walk(0, false, [&](std::string_view element) {
    batch.add();
    append_request_bulk(out, element);
    return true;
  });
}

void append_set(const Entry& entry, std::string& out) {
  const auto& set = static_cast<const SetObject&>(*entry.object());
  Batcher batch(out, "SADD", entry.key(), set.size(), 1);
  set.for_each([&](std::string_view member) {
    batch.add();
    append_request_bulk(out, member);
  });
}

void append_zset(const Entry& entry, std::string& out) {
  const auto& zset = static_cast<const ZSetObject&>(*entry.object());
  Batcher batch(out, "ZADD", entry.key(), zset.size(), 2);
  zset.for_each([&](std::string_view member, double score) {
    batch.add();
    // The reply's round-trip format, so the score reads back bit-exact (inf/-inf included).
    char buf[32];
    append_request_bulk(out, protocol::double_text(score, buf));
    append_request_bulk(out, member);
  });
}

void append_hash(const Entry& entry, std::string& out) {
  const auto& hash = static_cast<const HashObject&>(*entry.object());
  Batcher batch(out, "HSET", entry.key(), hash.size(), 2);
  hash.for_each([&](std::string_view field, std::string_view value) {
    batch.add();
    append_request_bulk(out, field);
    append_request_bulk(out, value);
  });
}

void append_command(std::string& out, std::initializer_list<std::string_view> args) {
  append_request_header(out, args.size());
  for (std::string_view a : args) append_request_bulk(out, a);
}

std::string int_text(uint64_t v) {
  char buf[24];
  return std::string(buf, static_cast<size_t>(std::to_chars(buf, buf + sizeof(buf), v).ptr - buf));
}

std::string int_text(int64_t v) {
  char buf[24];
  return std::string(buf, static_cast<size_t>(std::to_chars(buf, buf + sizeof(buf), v).ptr - buf));
}

// As Redis's rewriteStreamObject: XADD of every entry (an empty stream made by XADD MAXLEN 0),
// XSETID with the stream's counters, then each group with XGROUP CREATE, its pending entries as
// XCLAIM ... FORCE JUSTID and its consumers without pending entries as XGROUP CREATECONSUMER.
void append_stream(const Entry& entry, std::string& out) {
  const auto& stream = static_cast<const StreamObject&>(*entry.object());
  const std::string_view key = entry.key();
  if (stream.length() == 0) {
    append_command(out, {"XADD", key, "MAXLEN", "0", "0-1", "x", "y"});
  }
  stream.for_each(kMinStreamID, kMaxStreamID, false, [&](const StreamItem& item) {
    append_request_header(out, 3 + item.size());
    append_request_bulk(out, "XADD");
    append_request_bulk(out, key);
    append_request_bulk(out, format_stream_id(item.id));
    item.for_each_string([&](std::string_view s) { append_request_bulk(out, s); });
    return true;
  });
  append_command(out, {"XSETID", key, format_stream_id(stream.last_id()), "ENTRIESADDED",
                       int_text(stream.entries_added()), "MAXDELETEDID",
                       format_stream_id(stream.max_deleted_id())});
  for (const auto& [name, group] : stream.groups()) {
    append_command(out, {"XGROUP", "CREATE", key, name, format_stream_id(group->last_id),
                         "ENTRIESREAD", int_text(group->entries_read)});
    for (const auto& [consumer_name, consumer] : group->consumers()) {
      if (consumer->pending.empty()) {
        append_command(out, {"XGROUP", "CREATECONSUMER", key, name, consumer_name});
        continue;
      }
      for (StreamID id : consumer->pending) {
        const StreamNack& nack = group->pel().at(id);
        append_command(out, {"XCLAIM", key, name, consumer_name, "0", format_stream_id(id), "TIME",
                             int_text(nack.delivery_time), "RETRYCOUNT",
                             int_text(nack.delivery_count), "JUSTID", "FORCE"});
      }
    }
  }
}

void append_pexpireat(const Entry& entry, std::string& out) {
  char buf[24];
  const auto end = std::to_chars(buf, buf + sizeof(buf), entry.expire_at()).ptr;
  append_request_header(out, 3);
  append_request_bulk(out, "PEXPIREAT");
  append_request_bulk(out, entry.key());
  append_request_bulk(out, std::string_view(buf, static_cast<size_t>(end - buf)));
}

// A request of `n` arguments behind `prefix`.
void append_prefixed_header(std::string& out, std::span<const std::string_view> prefix, size_t n) {
  append_request_header(out, prefix.size() + n);
  for (std::string_view p : prefix) append_request_bulk(out, p);
}

}  // namespace

size_t append_key_slice(const Entry& entry, KeySliceCursor& cursor, size_t elements,
                        std::span<const std::string_view> prefix, std::string& out) {
  size_t requests = 0;
  if (!cursor.begun) {
    cursor.begun = true;
    append_prefixed_header(out, prefix, 2);
    append_request_bulk(out, "DEL");
    append_request_bulk(out, entry.key());
    requests++;
  }
  // The slice's elements, gathered first: a batch's header states its count.
  std::vector<std::string> items;
  size_t args_per_item = 1;
  std::string_view name;
  switch (entry.type()) {
    case ValueType::kString:
    case ValueType::kStream:
      // Copied whole (a DUMP payload); never sliced.
      assert(false && "append_key_slice: only collections are sliced");
      cursor.done = true;
      return requests;
    case ValueType::kList: {
      name = "RPUSH";
      const auto& list = static_cast<const ListObject&>(*entry.object());
      if (cursor.position < list.size()) {
        list.walk(cursor.position, false, [&](std::string_view element) {
          items.emplace_back(element);
          return items.size() < elements;
        });
      }
      cursor.position += items.size();
      cursor.done = cursor.position >= list.size();
      break;
    }
    case ValueType::kZSet: {
      name = "ZADD";
      args_per_item = 2;
      const auto& zset = static_cast<const ZSetObject&>(*entry.object());
      const size_t n =
          std::min<size_t>(elements, zset.size() - std::min<size_t>(cursor.position, zset.size()));
      zset.visit_ranks(cursor.position, n, false, [&](std::string_view member, double score) {
        char buf[32];
        items.emplace_back(protocol::double_text(score, buf));
        items.emplace_back(member);
      });
      cursor.position += n;
      cursor.done = cursor.position >= zset.size();
      break;
    }
    case ValueType::kSet: {
      name = "SADD";
      const auto& set = static_cast<const SetObject&>(*entry.object());
      cursor.position = set.scan(cursor.position, elements,
                                 [&](std::string_view member) { items.emplace_back(member); });
      cursor.done = cursor.position == 0;
      break;
    }
    case ValueType::kHash: {
      name = "HSET";
      args_per_item = 2;
      const auto& hash = static_cast<const HashObject&>(*entry.object());
      cursor.position =
          hash.scan(cursor.position, elements, [&](std::string_view field, std::string_view value) {
            items.emplace_back(field);
            items.emplace_back(value);
          });
      cursor.done = cursor.position == 0;
      break;
    }
  }
  const size_t per_batch = kItemsPerCommand * args_per_item;
  for (size_t i = 0; i < items.size(); i += per_batch) {
    const size_t n = std::min(per_batch, items.size() - i);
    append_prefixed_header(out, prefix, 2 + n);
    append_request_bulk(out, name);
    append_request_bulk(out, entry.key());
    for (size_t j = i; j < i + n; ++j) append_request_bulk(out, items[j]);
    requests++;
  }
  if (cursor.done && entry.has_expire()) {
    char buf[24];
    const auto end = std::to_chars(buf, buf + sizeof(buf), entry.expire_at()).ptr;
    append_prefixed_header(out, prefix, 3);
    append_request_bulk(out, "PEXPIREAT");
    append_request_bulk(out, entry.key());
    append_request_bulk(out, std::string_view(buf, static_cast<size_t>(end - buf)));
    requests++;
  }
  return requests;
}

void append_key_commands(const Entry& entry, std::string& out) {
  switch (entry.type()) {
    case ValueType::kString:
      append_request_header(out, 3);
      append_request_bulk(out, "SET");
      append_request_bulk(out, entry.key());
      append_request_bulk(out, entry.string_value());
      break;
    case ValueType::kList:
      append_list(entry, out);
      break;
    case ValueType::kSet:
      append_set(entry, out);
      break;
    case ValueType::kZSet:
      append_zset(entry, out);
      break;
    case ValueType::kHash:
      append_hash(entry, out);
      break;
    case ValueType::kStream:
      append_stream(entry, out);
      break;
  }
  if (entry.has_expire()) append_pexpireat(entry, out);
}

}  // namespace ringkv::engine
