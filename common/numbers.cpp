// Redis-compatible number parsing: integers (string2ll), memory sizes (memtoull), SCAN cursors.
#include "common/numbers.h"

#include <array>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <limits>
#include <string>

namespace ringkv::common {

std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ') ++j;
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

namespace {

struct Unit {
  std::string_view name;
  uint64_t multiplier;
};

constexpr std::array<Unit, 7> kUnits = {{{"b", 1},
                                         {"k", 1000},
                                         {"kb", 1024},
                                         {"m", 1000 * 1000},
                                         {"mb", 1024 * 1024},
                                         {"g", 1000ull * 1000 * 1000},
                                         {"gb", 1024ull * 1024 * 1024}}};

}  // namespace

std::optional<int64_t> parse_integer(std::string_view text) {
  if (text.empty() || text.size() > 20) return std::nullopt;
  size_t i = 0;
  bool negative = false;
  if (text[0] == '-') {
    negative = true;
    i = 1;
    if (text.size() == 1) return std::nullopt;
  }
  if (text.size() - i > 1 && text[i] == '0') return std::nullopt;
  if (text == "0") return 0;
  if (text[i] < '1' || text[i] > '9') return std::nullopt;
  // Accumulate as unsigned so INT64_MIN, whose magnitude exceeds INT64_MAX, still parses.
  uint64_t magnitude = 0;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c < '0' || c > '9') return std::nullopt;
    uint64_t digit = static_cast<uint64_t>(c - '0');
    if (magnitude > (std::numeric_limits<uint64_t>::max() - digit) / 10) return std::nullopt;
    magnitude = magnitude * 10 + digit;
  }
  constexpr uint64_t kMaxPositive = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (negative) {
    if (magnitude > kMaxPositive + 1) return std::nullopt;
    return static_cast<int64_t>(0 - magnitude);
  }
  if (magnitude > kMaxPositive) return std::nullopt;
  return static_cast<int64_t>(magnitude);
}

std::optional<uint64_t> parse_unsigned(std::string_view text) {
  const std::optional<int64_t> v = parse_integer(text);
  if (!v || *v < 0) return std::nullopt;
  return static_cast<uint64_t>(*v);
}

std::optional<uint64_t> parse_memory(std::string_view text) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  std::string_view unit = text.substr(digits);
  uint64_t multiplier = 1;
  if (!unit.empty()) {
    bool known = false;
    for (const Unit& u : kUnits) {
      if (equals_ignore_case(unit, u.name)) {
        multiplier = u.multiplier;
        known = true;
        break;
      }
    }
    if (!known) return std::nullopt;
  }
  // Redis copies the digits into a 128-byte buffer and converts them with strtoull, which
  // saturates on overflow instead of failing.
  if (digits >= 128) return std::nullopt;
  uint64_t value = 0;
  for (size_t i = 0; i < digits; ++i) {
    uint64_t digit = static_cast<uint64_t>(text[i] - '0');
    if (value > (std::numeric_limits<uint64_t>::max() - digit) / 10) {
      value = std::numeric_limits<uint64_t>::max();
      break;
    }
    value = value * 10 + digit;
  }
  if (value > std::numeric_limits<uint64_t>::max() / multiplier) return std::nullopt;
  return value * multiplier;
}

bool parse_scan_cursor(std::string_view arg, uint64_t& cursor) {
  const std::string text(arg);  // strtoul needs a NUL; like Redis, it stops at an embedded NUL
  char* end = nullptr;
  errno = 0;
  const unsigned long value = std::strtoul(text.c_str(), &end, 10);
  if (std::isspace(static_cast<unsigned char>(text.c_str()[0])) || *end != '\0' ||
      errno == ERANGE) {
    return false;
  }
  cursor = value;
  return true;
}

}  // namespace ringkv::common
