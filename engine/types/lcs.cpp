// The LCS computation (see lcs.h), walking the table back in Redis 7.0's order so that ties
// between equally long subsequences resolve as Redis resolves them.
#include "engine/types/lcs.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ringkv::engine {

uint64_t lcs_table_bytes(size_t a_len, size_t b_len) {
  return static_cast<uint64_t>(a_len + 1) * (b_len + 1) * sizeof(uint32_t);
}

LcsResult lcs(std::string_view a, std::string_view b, bool walk) {
  const auto alen = static_cast<uint32_t>(a.size());
  const auto blen = static_cast<uint32_t>(b.size());
  std::vector<uint32_t> dp(static_cast<size_t>(alen + 1) * (blen + 1), 0);
  auto at = [&](uint32_t i, uint32_t j) -> uint32_t& {
    return dp[j + static_cast<size_t>(i) * (blen + 1)];
  };
  for (uint32_t i = 1; i <= alen; ++i) {
    for (uint32_t j = 1; j <= blen; ++j) {
      if (a[i - 1] == b[j - 1]) {
        at(i, j) = at(i - 1, j - 1) + 1;
      } else {
        const uint32_t up = at(i - 1, j);
        const uint32_t left = at(i, j - 1);
        at(i, j) = up > left ? up : left;
      }
    }
  }
  LcsResult out;
  out.length = at(alen, blen);
  if (!walk) return out;
  out.subsequence.assign(out.length, '\0');
  uint32_t idx = out.length;
  // A range in progress has a_start != alen; ranges grow backwards while matches are contiguous.
  LcsRange range{alen, 0, 0, 0};
  uint32_t i = alen;
  uint32_t j = blen;
  while (i > 0 && j > 0) {
    bool emit = false;
    if (a[i - 1] == b[j - 1]) {
      out.subsequence[idx - 1] = a[i - 1];
      if (range.a_start == alen) {
        range = {i - 1, i - 1, j - 1, j - 1};
      } else if (range.a_start == i && range.b_start == j) {
        range.a_start--;
        range.b_start--;
      } else {
        emit = true;
      }
      if (range.a_start == 0 || range.b_start == 0) emit = true;
      idx--;
      i--;
      j--;
    } else {
      if (at(i - 1, j) > at(i, j - 1)) {
        i--;
      } else {
        j--;
      }
      if (range.a_start != alen) emit = true;
    }
    if (emit) {
      out.ranges.push_back(range);
      range.a_start = alen;
    }
  }
  return out;
}

}  // namespace ringkv::engine
