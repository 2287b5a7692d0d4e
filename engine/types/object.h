// The collection object model: every non-string value (hash, list, set, sorted set, stream) is an
// Object owned by its key's Entry through the entry's pointer-sized value slot.
//
// The Store owns objects: deleting, overwriting, expiring or flushing a key frees its object
// (FLUSHALL ASYNC on the background thread), COPY deep-copies it (Object::clone), RENAME and
// TTL changes move it, and used_memory counts Object::memory().
//
// Commands reach objects only through two accessors, so the rules hold for every type:
//   read_object<T>(store, key)          lookup for reading (hit/miss counters, LRU); WRONGTYPE
//                                       when the key holds another type; nullptr when absent.
//   write_object<T>(store, key, create) lookup for writing; with `create` a missing key gets an
//                                       empty T. The returned ObjectWrite guard, when it goes out
//                                       of scope, tells the store how the object's memory changed
//                                       and deletes the key if the object ended up empty (Redis
//                                       never keeps empty collections).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <utility>

#include "engine/keyspace/entry.h"
#include "engine/keyspace/store.h"
#include "engine/result.h"
#include "protocol/errors.h"

namespace ringkv::engine {

// Base of every collection value. Subclasses declare `static constexpr ValueType kType`, are
// default-constructible (an empty value) and keep memory() exact and cheap (a running count).
class Object {
 public:
  virtual ~Object() = default;
  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;

  ValueType type() const { return type_; }
  // What OBJECT ENCODING reports ("listpack", "hashtable", ...).
  virtual std::string_view encoding_name() const = 0;
  // Number of elements; a key whose object has none is deleted, unless erase_when_empty() says
  // otherwise (a stream stays when its last entry goes, as in Redis).
  virtual size_t size() const = 0;
  virtual bool erase_when_empty() const { return true; }
  // The allocations freeing it takes, as Redis's lazyfreeGetFreeEffort counts them: a freed
  // value past 64 is freed on a background thread when the deletion may be lazy (UNLINK...).
  virtual size_t free_effort() const { return 1; }
  // Bytes this object holds on the heap, itself included, as the allocator accounts them.
  virtual size_t memory() const = 0;
  // A deep copy (COPY).
  virtual std::unique_ptr<Object> clone() const = 0;
  // Starts loading what looking `members` up will read (see ChainedTable::prefetch): a pipelined
  // request's arguments after its key, seen before it runs. A hint only; changes nothing.
  virtual void prefetch_members(std::span<const std::string_view> /*members*/,
                                bool /*chain*/) const {}

 protected:
  explicit Object(ValueType type) : type_(type) {}

 private:
  ValueType type_;
};

// What OBJECT ENCODING prints for any key.
inline std::string_view value_encoding_name(const Entry& e) {
  return e.type() == ValueType::kString ? encoding_name(e.encoding()) : e.object()->encoding_name();
}

// Write access to one key's object for the length of a command (see the file comment).
// Evaluates to false when the key is absent and was not created.
template <typename T>
class ObjectWrite {
 public:
  ObjectWrite(Store& store, std::string_view key, T* object)
      : store_(&store), key_(key), object_(object), before_(object ? object->memory() : 0) {}
  ObjectWrite(ObjectWrite&& other) noexcept
      : store_(other.store_),
        key_(other.key_),
        object_(std::exchange(other.object_, nullptr)),
        before_(other.before_) {}
  ObjectWrite& operator=(ObjectWrite&&) = delete;
  ~ObjectWrite() { finish(); }

  explicit operator bool() const { return object_ != nullptr; }
  T* get() const { return object_; }
  T* operator->() const { return object_; }
  T& operator*() const { return *object_; }

  // Ends the write early (before the key is read again in the same command): accounts the
  // memory change and deletes the key when the object is empty.
  void finish() {
    if (object_ == nullptr) return;
    T* object = std::exchange(object_, nullptr);
    store_->object_resized(before_, object->memory());
    if (object->size() == 0 && object->erase_when_empty()) store_->erase(key_);
  }

 private:
  Store* store_;
  std::string_view key_;  // the command's argument: outlives the guard
  T* object_;
  size_t before_;
};

// The T in `e`: nullptr when `e` is, kWrongType when it holds another type.
template <typename T>
Result<const T*> object_of(const Entry* e) {
  if (e == nullptr) return static_cast<const T*>(nullptr);
  if (e->type() != T::kType) return Error{protocol::err::kWrongType};
  return static_cast<const T*>(e->object());
}

// Looks `key` up for reading a T: nullptr when absent, kWrongType when it holds another type.
// The pointer is valid until the key is next written.
template <typename T>
Result<const T*> read_object(Store& store, std::string_view key) {
  return object_of<T>(store.lookup(key));
}

// Looks `key` up as a write command does (Redis's lookupKeyWrite: no hit or miss counted, no
// keymiss event) for a T: nullptr when absent, kWrongType when it holds another type.
template <typename T>
Result<const T*> peek_object(Store& store, std::string_view key) {
  return object_of<T>(store.peek(key));
}

// Looks `key` up for writing a T (kWrongType when it holds another type). When absent and
// `create`, adds the key with an empty T; otherwise the guard is empty. `key` must outlive the
// guard (a command argument does).
template <typename T>
Result<ObjectWrite<T>> write_object(Store& store, std::string_view key, bool create) {
  const Entry* e = store.peek(key);
  if (e != nullptr) {
    if (e->type() != T::kType) return Error{protocol::err::kWrongType};
    return ObjectWrite<T>(store, key, static_cast<T*>(e->object()));
  }
  if (!create) return ObjectWrite<T>(store, key, nullptr);
  e = store.add_object(key, std::make_unique<T>());
  return ObjectWrite<T>(store, key, static_cast<T*>(e->object()));
}

// HDEL, SREM and ZREM: removes each of `items` from the T at `key` with `remove(T&, item)` (true
// when the item was there) and returns how many were removed, 0 when the key is absent. Stops
// once the T is empty, as Redis does (the key is deleted then). Error: kWrongType.
template <typename T, typename Remove>
Result<int64_t> remove_each(Store& store, std::string_view key,
                            std::span<const std::string_view> items, Remove remove) {
  auto found = write_object<T>(store, key, false);
  if (!found) return Error{found.error()};
  T* object = found.value().get();
  int64_t removed = 0;
  if (object == nullptr) return removed;
  for (std::string_view item : items) {
    if (remove(*object, item)) ++removed;
    if (object->size() == 0) break;
  }
  return removed;
}

}  // namespace ringkv::engine
