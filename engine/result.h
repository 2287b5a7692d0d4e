// Result<T>: a value or a Redis error text. Pure store operations return it; handlers turn the
// error into a reply. No exceptions on the hot path.
#pragma once

#include <cassert>
#include <string_view>
#include <utility>
#include <variant>

namespace ringkv::engine {

// An error reply text (Redis's exact wording, e.g. protocol::err::kWrongType). Always points at
// static storage.
struct Error {
  std::string_view text;
};

template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Error e) : v_(e) {}                 // NOLINT: implicit by design

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  const T& value() const {
    assert(ok());
    return std::get<0>(v_);
  }
  T& value() {
    assert(ok());
    return std::get<0>(v_);
  }
  const T& operator*() const { return value(); }
  const T* operator->() const { return &value(); }
  std::string_view error() const {
    assert(!ok());
    return std::get<1>(v_).text;
  }

 private:
  std::variant<T, Error> v_;
};

}  // namespace ringkv::engine
