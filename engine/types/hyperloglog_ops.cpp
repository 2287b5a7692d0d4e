// HyperLogLog commands on the Store (see hyperloglog_ops.h). A dense sketch is updated in place
// (its 12304 bytes are not copied per PFADD); a sparse one, at most hll-sparse-max-bytes long, is
// rewritten whole.
#include "engine/types/hyperloglog_ops.h"

#include <string>

#include "engine/types/bitmap_ops.h"
#include "protocol/errors.h"

namespace ringkv::engine {

namespace err = protocol::err;

namespace {

// The sketch at `key` for a command (Redis's isHLLObjectOrReply): nullptr when absent.
Result<const Entry*> hll_entry(const Entry* e) {
  if (e == nullptr) return e;
  if (e->type() != ValueType::kString) return Error{err::kWrongType};
  if (e->encoding() == StringEncoding::kInt || !hll::is_hll(e->string_value())) {
    return Error{err::kNotHll};
  }
  return e;
}

std::span<uint8_t> header_of(std::string& hll) {
  return {reinterpret_cast<uint8_t*>(hll.data()), hll::kHeaderSize};
}

}  // namespace

Result<bool> pf_add(Store& store, std::string_view key, std::span<const std::string_view> elements,
                    bool& modified, size_t sparse_max_bytes) {
  modified = false;
  auto found = hll_entry(store.peek(key));
  if (!found) return Error{found.error()};
  const Entry* e = *found;
  bool updated = false;
  if (e != nullptr && hll::encoding(e->string_value()) == hll::kDense) {
    std::span<uint8_t> dense = writable_string(store, key);
    for (std::string_view element : elements) updated |= hll::dense_add(dense, element);
    if (updated) hll::invalidate_cache(dense.first(hll::kHeaderSize));
    modified = updated;
    return updated;
  }
  std::string sketch = e != nullptr ? std::string(e->string_value()) : hll::create();
  updated = e == nullptr;
  bool corrupt = false;
  for (std::string_view element : elements) {
    const int r = hll::add(sketch, element, sparse_max_bytes);
    if (r < 0) {
      corrupt = true;
      break;
    }
    updated |= r == 1;
  }
  if (updated && !corrupt) hll::invalidate_cache(header_of(sketch));
  if (e == nullptr || updated) {
    modified = true;
    store.set_string(key, sketch, e != nullptr ? Expiry::keep() : Expiry::none(),
                     StringEncoding::kRaw);
  } else {
    writable_string(store, key);
  }
  if (corrupt) return Error{err::kInvalidHll};
  return updated;
}

Result<int64_t> pf_count(Store& store, std::span<const std::string_view> keys, bool& changed) {
  changed = false;
  if (keys.size() > 1) {
    hll::Registers max{};
    for (std::string_view key : keys) {
      auto found = hll_entry(store.lookup(key));
      if (!found) return Error{found.error()};
      if (*found == nullptr) continue;
      if (!hll::merge_into(max, (*found)->string_value())) return Error{err::kInvalidHll};
    }
    return static_cast<int64_t>(hll::estimate(max));
  }
  auto found = hll_entry(store.lookup(keys[0]));
  if (!found) return Error{found.error()};
  if (*found == nullptr) return int64_t{0};
  std::span<uint8_t> sketch = writable_string(store, keys[0]);
  const std::string_view value(reinterpret_cast<const char*>(sketch.data()), sketch.size());
  if (auto cached = hll::cached_count(value)) return static_cast<int64_t>(*cached);
  auto count = hll::estimate(value);
  if (!count) return Error{err::kInvalidHll};
  hll::set_cached_count(sketch.first(hll::kHeaderSize), *count);
  changed = true;
  return static_cast<int64_t>(*count);
}

Result<bool> pf_merge(Store& store, std::span<const std::string_view> keys,
                      size_t sparse_max_bytes) {
  hll::Registers max{};
  bool use_dense = false;
  for (std::string_view key : keys) {
    auto found = hll_entry(store.lookup(key));
    if (!found) return Error{found.error()};
    if (*found == nullptr) continue;
    std::string_view value = (*found)->string_value();
    if (hll::encoding(value) == hll::kDense) use_dense = true;
    if (!hll::merge_into(max, value)) return Error{err::kInvalidHll};
  }
  const std::string_view dest = keys[0];
  const Entry* e = store.peek(dest);
  std::string sketch = e != nullptr ? std::string(e->string_value()) : hll::create();
  if (use_dense && !hll::sparse_to_dense(sketch)) return Error{err::kInvalidHll};
  for (size_t i = 0; i < hll::kRegisters; ++i) {
    if (max[i] == 0) continue;
    if (hll::encoding(sketch) == hll::kDense) {
      std::span<uint8_t> registers(reinterpret_cast<uint8_t*>(sketch.data()) + hll::kHeaderSize,
                                   hll::kDenseSize - hll::kHeaderSize);
      if (max[i] > hll::dense_get(registers, i)) hll::dense_set(registers, i, max[i]);
    } else {
      hll::sparse_set(sketch, i, max[i], sparse_max_bytes);
    }
  }
  hll::invalidate_cache(header_of(sketch));
  store.set_string(dest, sketch, e != nullptr ? Expiry::keep() : Expiry::none(),
                   StringEncoding::kRaw);
  return true;
}

Result<std::string_view> pf_debug_lookup(Store& store, std::string_view key) {
  const Entry* e = store.peek(key);
  if (e == nullptr) return Error{err::kHllKeyMissing};
  auto found = hll_entry(e);
  if (!found) return Error{found.error()};
  std::span<uint8_t> sketch = writable_string(store, key);
  return std::string_view(reinterpret_cast<const char*>(sketch.data()), sketch.size());
}

Result<bool> pf_to_dense(Store& store, std::string_view key) {
  const Entry* e = store.peek(key);
  if (hll::encoding(e->string_value()) == hll::kDense) return false;
  std::string sketch(e->string_value());
  if (!hll::sparse_to_dense(sketch)) return Error{err::kInvalidHll};
  store.set_string(key, sketch, Expiry::keep(), StringEncoding::kRaw);
  return true;
}

}  // namespace ringkv::engine
