// The longest common subsequence of two strings, as Redis 7.0's LCS command computes it: the
// classic dynamic-programming table, then one walk back from its end that yields the subsequence
// and the matched ranges, last range first.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ringkv::engine {

// One matched run: a[a_start..a_end] equals b[b_start..b_end] (inclusive).
struct LcsRange {
  uint32_t a_start = 0;
  uint32_t a_end = 0;
  uint32_t b_start = 0;
  uint32_t b_end = 0;
  uint32_t length() const { return a_end - a_start + 1; }
};

struct LcsResult {
  uint32_t length = 0;
  std::string subsequence;       // filled when asked for
  std::vector<LcsRange> ranges;  // filled when asked for, from the end of the strings back
};

// The table's size in bytes for strings of these lengths (Redis refuses the command when it
// passes proto-max-bulk-len).
uint64_t lcs_table_bytes(size_t a_len, size_t b_len);

// Computes the LCS of `a` and `b`; the subsequence and the ranges only when `walk` is set.
LcsResult lcs(std::string_view a, std::string_view b, bool walk);

}  // namespace ringkv::engine
