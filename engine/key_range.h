// A command row's key specs, the one place a row says where its keys are, and the legacy key
// range COMMAND INFO reports (first key, last key, step), derived from them at compile time the
// way Redis 7.0 derives it (populateCommandLegacyRangeSpec).
#pragma once

#include <algorithm>
#include <climits>
#include <string_view>

namespace ringkv::engine {

namespace key_range_detail {

// The field of `rest` before the next `sep`; `rest` moves past it.
constexpr std::string_view next_field(std::string_view& rest, char sep) {
  const size_t at = rest.find(sep);
  const std::string_view field = rest.substr(0, at);
  rest = at == std::string_view::npos ? std::string_view() : rest.substr(at + 1);
  return field;
}

// A key spec's small decimal number ("-1", "0", "2"). A malformed one is a mistake in a row: it
// stops the constant evaluation of the table, so the build fails.
constexpr int small_int(std::string_view text) {
  const bool negative = text.starts_with('-');
  if (negative) text.remove_prefix(1);
  if (text.empty() || text.size() > 4) throw "a key spec holds a malformed number";
  int value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') throw "a key spec holds a malformed number";
    value = value * 10 + (c - '0');
  }
  return negative ? -value : value;
}

}  // namespace key_range_detail

struct KeySpecs {
  // ';'-separated; each "FLAGS|begin index|lastkey|keystep|limit[|notes]" with space-separated
  // flags, e.g. "RW access delete|1|0|1|0", or, for keys that follow a count argument,
  // "FLAGS|begin index|keynum|keynumidx,firstkey,keystep" (e.g. LMPOP's
  // "RW access delete|1|keynum|0,1,1"); a begin index "keyword:TOKEN:startfrom" searches for a
  // keyword (XREAD's "keyword:STREAMS:1"), "unknown" says no argument names them (SORT's
  // STORE). Empty for keyless commands.
  std::string_view text;
  // The legacy range: 0, 0, 0 when no spec is a plain range (the keys are movable).
  int first = 0;
  int last = 0;  // negative counts from the end (-1 = last argument)
  int step = 0;

  constexpr KeySpecs() = default;
  constexpr KeySpecs(const char* specs) : KeySpecs(std::string_view(specs)) {}  // NOLINT
  constexpr KeySpecs(std::string_view specs) : text(specs) {                    // NOLINT
    using key_range_detail::next_field;
    using key_range_detail::small_int;
    // Redis takes a lone spec that begins at an index and finds a range as it is. Of several,
    // it joins the ranges of step 1 that follow one another, and skips the others.
    int count = 0;
    int first_key = INT_MAX;
    int last_key = 0;
    int lone_begin = 0, lone_last = 0, lone_step = 0;
    bool lone_range = false;
    std::string_view rest = specs;
    while (!rest.empty()) {
      std::string_view spec = next_field(rest, ';');
      next_field(spec, '|');  // the flags
      const std::string_view begin = next_field(spec, '|');
      const std::string_view find = next_field(spec, '|');
      const bool range = !begin.starts_with("keyword:") && begin != "unknown" && find != "keynum" &&
                         find != "unknown";
      ++count;
      if (!range) continue;
      const int at = small_int(begin);
      const int lastkey = small_int(find);
      const int keystep = small_int(next_field(spec, '|'));
      // The last key's absolute index (a range's lastkey counts from its begin index).
      const int absolute_last = lastkey < 0 ? lastkey : at + lastkey;
      if (count == 1) {
        lone_range = true;
        lone_begin = at;
        lone_last = absolute_last;
        lone_step = keystep;
      }
      if (keystep != 1 || (last_key != 0 && last_key != at - 1)) continue;
      first_key = std::min(first_key, at);
      // Compared as unsigned, as Redis does: a last key counted from the end wins.
      last_key = static_cast<int>(
          std::max(static_cast<unsigned>(last_key), static_cast<unsigned>(absolute_last)));
    }
    if (count == 1 && lone_range) {
      first = lone_begin;
      last = lone_last;
      step = lone_step;
    } else if (first_key != INT_MAX) {
      first = first_key;
      last = last_key;
      step = 1;
    }
  }

  constexpr bool empty() const { return text.empty(); }
};

}  // namespace ringkv::engine
