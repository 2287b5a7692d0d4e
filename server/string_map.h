// StringMap: an unordered_map keyed by std::string that string_views can look up without
// building a std::string (keys of commands arrive as views into the read buffer).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace ringkv::server {

struct StringViewHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

template <typename V>
using StringMap = std::unordered_map<std::string, V, StringViewHash, std::equal_to<>>;

}  // namespace ringkv::server
