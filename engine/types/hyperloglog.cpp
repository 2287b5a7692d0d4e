// HyperLogLog sketches in Redis's byte format (see hyperloglog.h): hashing, dense and sparse
// register updates, sparse-to-dense promotion, merging, the estimator, and the self test. The
// opcode rewriting follows Redis's hllSparseSet step for step, since the bytes it leaves are
// part of what GET returns.
#include "engine/types/hyperloglog.h"

#include <cmath>
#include <cstring>
#include <random>

namespace ringkv::engine::hll {

namespace {

constexpr uint8_t kRegisterMax = (1 << kBits) - 1;
constexpr int kSparseValMaxValue = 32;
constexpr int kSparseValMaxLen = 4;
constexpr int kSparseZeroMaxLen = 64;
constexpr int kSparseXzeroMaxLen = 16384;
constexpr double kAlphaInf = 0.721347520444481703680;  // 0.5 / ln(2)

bool is_zero(uint8_t op) { return (op & 0xc0) == 0; }
bool is_xzero(uint8_t op) { return (op & 0xc0) == 0x40; }
bool is_val(uint8_t op) { return (op & 0x80) != 0; }
int zero_len(uint8_t op) { return (op & 0x3f) + 1; }
int xzero_len(uint8_t op, uint8_t next) { return (((op & 0x3f) << 8) | next) + 1; }
int val_value(uint8_t op) { return ((op >> 2) & 0x1f) + 1; }
int val_len(uint8_t op) { return (op & 0x3) + 1; }
uint8_t val_op(int value, int len) {
  return static_cast<uint8_t>((((value - 1) << 2) | (len - 1)) | 0x80);
}
uint8_t zero_op(int len) { return static_cast<uint8_t>(len - 1); }
void put_xzero(uint8_t* p, int len) {
  const int l = len - 1;
  p[0] = static_cast<uint8_t>((l >> 8) | 0x40);
  p[1] = static_cast<uint8_t>(l & 0xff);
}

uint8_t* bytes(std::string& s) { return reinterpret_cast<uint8_t*>(s.data()); }
const uint8_t* bytes(std::string_view s) { return reinterpret_cast<const uint8_t*>(s.data()); }

// Walks a sparse sketch's opcodes, calling zero(run) and value(value, run); false when the runs
// do not add up to exactly kRegisters. A run that would pass the last register stops the walk
// as corrupt, as in Redis with the CVE-2025-32023 fix (which the 7.0.15 oracle carries).
template <typename Zero, typename Value>
bool walk_sparse(std::string_view hll, Zero zero, Value value) {
  const uint8_t* p = bytes(hll) + kHeaderSize;
  const uint8_t* end = bytes(hll) + hll.size();
  size_t index = 0;
  while (p < end) {
    if (is_val(*p)) {
      const int run = val_len(*p);
      if (index + run > kRegisters) return false;
      value(index, val_value(*p), run);
      index += run;
      ++p;
      continue;
    }
    const bool x = is_xzero(*p);
    const int run = x ? xzero_len(p[0], p + 1 < end ? p[1] : 0) : zero_len(*p);
    if (index + run > kRegisters) return false;
    zero(index, run);
    index += run;
    p += x ? 2 : 1;
  }
  return index == kRegisters;
}

// The Ertl estimator's sigma and tau (Redis's hllSigma and hllTau).
double sigma(double x) {
  if (x == 1.) return INFINITY;
  double z_prime;
  double y = 1;
  double z = x;
  do {
    x *= x;
    z_prime = z;
    z += x * y;
    y += y;
  } while (z_prime != z);
  return z;
}

double tau(double x) {
  if (x == 0. || x == 1.) return 0.;
  double z_prime;
  double y = 1.0;
  double z = 1 - x;
  do {
    x = std::sqrt(x);
    z_prime = z;
    y *= 0.5;
    z -= std::pow(1 - x, 2) * y;
  } while (z_prime != z);
  return z / 3;
}

// The estimate from a histogram of register values (index kQ + 1 is the largest possible).
uint64_t estimate_histogram(const int (&histogram)[64]) {
  const double m = kRegisters;
  double z = m * tau((m - histogram[kQ + 1]) / m);
  for (int j = kQ; j >= 1; --j) {
    z += histogram[j];
    z *= 0.5;
  }
  z += m * sigma(histogram[0] / m);
  return static_cast<uint64_t>(std::llroundl(kAlphaInf * m * m / z));
}

}  // namespace

uint64_t murmur_hash64a(std::string_view data, uint64_t seed) {
  const uint64_t m = 0xc6a4a7935bd1e995ULL;
  const int r = 47;
  const size_t len = data.size();
  uint64_t h = seed ^ (len * m);
  const uint8_t* p = bytes(data);
  const uint8_t* end = p + (len - (len & 7));
  for (; p != end; p += 8) {
    uint64_t k;
    std::memcpy(&k, p, 8);
    k *= m;
    k ^= k >> r;
    k *= m;
    h ^= k;
    h *= m;
  }
  switch (len & 7) {
    case 7:
      h ^= uint64_t{p[6]} << 48;
      [[fallthrough]];
    case 6:
      h ^= uint64_t{p[5]} << 40;
      [[fallthrough]];
    case 5:
      h ^= uint64_t{p[4]} << 32;
      [[fallthrough]];
    case 4:
      h ^= uint64_t{p[3]} << 24;
      [[fallthrough]];
    case 3:
      h ^= uint64_t{p[2]} << 16;
      [[fallthrough]];
    case 2:
      h ^= uint64_t{p[1]} << 8;
      [[fallthrough]];
    case 1:
      h ^= uint64_t{p[0]};
      h *= m;
      break;
    default:
      break;
  }
  h ^= h >> r;
  h *= m;
  h ^= h >> r;
  return h;
}

Pattern pattern(std::string_view element) {
  uint64_t hash = murmur_hash64a(element, 0xadc83b19ULL);
  const auto index = static_cast<uint32_t>(hash & (kRegisters - 1));
  hash >>= kP;
  hash |= uint64_t{1} << kQ;  // the run ends by bit kQ at the latest
  uint8_t count = 1;
  for (uint64_t bit = 1; (hash & bit) == 0; bit <<= 1) ++count;
  return {index, count};
}

std::string create() {
  std::string hll(kHeaderSize + 2, '\0');
  std::memcpy(hll.data(), "HYLL", 4);
  hll[4] = static_cast<char>(kSparse);
  put_xzero(bytes(hll) + kHeaderSize, static_cast<int>(kRegisters));
  return hll;
}

bool is_hll(std::string_view value) {
  if (value.size() < kHeaderSize || value.substr(0, 4) != "HYLL") return false;
  const uint8_t enc = static_cast<uint8_t>(value[4]);
  if (enc > kSparse) return false;
  return enc != kDense || value.size() == kDenseSize;
}

std::optional<uint64_t> cached_count(std::string_view hll) {
  const uint8_t* card = bytes(hll) + 8;
  if (card[7] & 0x80) return std::nullopt;
  uint64_t count = 0;
  for (int i = 7; i >= 0; --i) count = (count << 8) | card[i];
  return count;
}

void set_cached_count(std::span<uint8_t> header, uint64_t count) {
  for (int i = 0; i < 8; ++i) header[8 + i] = static_cast<uint8_t>(count >> (8 * i));
}

uint8_t dense_get(std::span<const uint8_t> registers, size_t index) {
  const size_t byte = index * kBits / 8;
  const unsigned fb = index * kBits & 7;
  const unsigned b0 = registers[byte];
  const unsigned b1 = byte + 1 < registers.size() ? registers[byte + 1] : 0;
  return static_cast<uint8_t>(((b0 >> fb) | (b1 << (8 - fb))) & kRegisterMax);
}

void dense_set(std::span<uint8_t> registers, size_t index, uint8_t value) {
  const size_t byte = index * kBits / 8;
  const unsigned fb = index * kBits & 7;
  const unsigned v = value;
  registers[byte] = static_cast<uint8_t>((registers[byte] & ~(kRegisterMax << fb)) | (v << fb));
  if (byte + 1 < registers.size()) {
    const unsigned fb8 = 8 - fb;
    registers[byte + 1] =
        static_cast<uint8_t>((registers[byte + 1] & ~(kRegisterMax >> fb8)) | (v >> fb8));
  }
}

bool dense_add(std::span<uint8_t> hll, std::string_view element) {
  const Pattern pat = pattern(element);
  std::span<uint8_t> registers = hll.subspan(kHeaderSize);
  if (pat.count <= dense_get(registers, pat.index)) return false;
  dense_set(registers, pat.index, pat.count);
  return true;
}

bool sparse_to_dense(std::string& hll) {
  if (encoding(hll) == kDense) return true;
  std::string dense(kDenseSize, '\0');
  std::memcpy(dense.data(), hll.data(), kHeaderSize);
  dense[4] = static_cast<char>(kDense);
  std::span<uint8_t> registers(bytes(dense) + kHeaderSize, kDenseSize - kHeaderSize);
  const bool valid = walk_sparse(
      hll, [](size_t, int) {},
      [&](size_t index, int value, int run) {
        for (int i = 0; i < run; ++i) dense_set(registers, index + i, static_cast<uint8_t>(value));
      });
  if (!valid) return false;
  hll = std::move(dense);
  return true;
}

int sparse_set(std::string& hll, size_t index, uint8_t count, size_t sparse_max_bytes) {
  auto promote = [&]() -> int {
    if (!sparse_to_dense(hll)) return -1;
    std::span<uint8_t> registers(bytes(hll) + kHeaderSize, kDenseSize - kHeaderSize);
    dense_set(registers, index, count);
    return 1;
  };
  if (count > kSparseValMaxValue) return promote();

  // Step 1: find the opcode covering `index`.
  size_t pos = kHeaderSize;
  size_t end = hll.size();
  size_t first = 0;
  std::optional<size_t> prev;
  long span = 0;
  while (pos < end) {
    const uint8_t op = bytes(hll)[pos];
    size_t oplen = 1;
    if (is_zero(op)) {
      span = zero_len(op);
    } else if (is_val(op)) {
      span = val_len(op);
    } else {
      span = xzero_len(op, pos + 1 < end ? bytes(hll)[pos + 1] : 0);
      oplen = 2;
    }
    if (static_cast<long>(index) <= static_cast<long>(first) + span - 1) break;
    prev = pos;
    pos += oplen;
    first += span;
  }
  if (span == 0 || pos >= end) return -1;

  const uint8_t op = bytes(hll)[pos];
  const bool zero = is_zero(op);
  const bool xzero = is_xzero(op);
  const bool val = is_val(op);
  const long runlen = zero    ? zero_len(op)
                      : xzero ? xzero_len(op, bytes(hll)[pos + 1])
                              : val_len(op);

  bool rewritten = false;
  // Case A and B: a VAL opcode already high enough, or covering only this register.
  if (val) {
    if (val_value(op) >= count) return 0;
    if (runlen == 1) {
      bytes(hll)[pos] = val_op(count, 1);
      rewritten = true;
    }
  }
  // Case C: a ZERO opcode of length 1.
  if (!rewritten && zero && runlen == 1) {
    bytes(hll)[pos] = val_op(count, 1);
    rewritten = true;
  }
  if (!rewritten) {
    // Case D: split the opcode into up to three (at most 5 bytes).
    uint8_t seq[5];
    size_t n = 0;
    const long last = static_cast<long>(first) + span - 1;
    const long at = static_cast<long>(index);
    auto put_zeros = [&](long len) {
      if (len > kSparseZeroMaxLen) {
        put_xzero(seq + n, static_cast<int>(len));
        n += 2;
      } else {
        seq[n++] = zero_op(static_cast<int>(len));
      }
    };
    if (zero || xzero) {
      if (at != static_cast<long>(first)) put_zeros(at - static_cast<long>(first));
      seq[n++] = val_op(count, 1);
      if (at != last) put_zeros(last - at);
    } else {
      const int current = val_value(op);
      if (at != static_cast<long>(first)) {
        seq[n++] = val_op(current, static_cast<int>(at - static_cast<long>(first)));
      }
      seq[n++] = val_op(count, 1);
      if (at != last) seq[n++] = val_op(current, static_cast<int>(last - at));
    }
    // Step 3: put the new sequence in place of the old opcode.
    const size_t oldlen = xzero ? 2 : 1;
    if (n > oldlen && hll.size() + (n - oldlen) > sparse_max_bytes) return promote();
    // The length changes by n - oldlen even for an XZERO whose second byte is past the end
    // (Redis read it as the terminator): the new sequence's last byte then falls off, as there.
    const size_t size = hll.size() + n - oldlen;
    hll.replace(pos, std::min(oldlen, hll.size() - pos), reinterpret_cast<const char*>(seq), n);
    hll.resize(size);
    end = hll.size();
  }

  // Step 4: merge adjacent VAL opcodes of the same value, scanning up to 5 opcodes from prev.
  size_t p = prev ? *prev : kHeaderSize;
  int scan = 5;
  while (p < end && scan-- > 0) {
    const uint8_t cur = bytes(hll)[p];
    if (is_xzero(cur)) {
      p += 2;
      continue;
    }
    if (is_zero(cur)) {
      ++p;
      continue;
    }
    if (p + 1 < end && is_val(bytes(hll)[p + 1])) {
      const uint8_t nxt = bytes(hll)[p + 1];
      const int v1 = val_value(cur);
      if (v1 == val_value(nxt)) {
        const int len = val_len(cur) + val_len(nxt);
        if (len <= kSparseValMaxLen) {
          bytes(hll)[p + 1] = val_op(v1, len);
          hll.erase(p, 1);
          --end;
          continue;
        }
      }
    }
    ++p;
  }
  invalidate_cache({bytes(hll), kHeaderSize});
  return 1;
}

int add(std::string& hll, std::string_view element, size_t sparse_max_bytes) {
  if (encoding(hll) == kDense) return dense_add({bytes(hll), hll.size()}, element) ? 1 : 0;
  const Pattern pat = pattern(element);
  return sparse_set(hll, pat.index, pat.count, sparse_max_bytes);
}

bool merge_into(Registers& max, std::string_view hll) {
  if (encoding(hll) == kDense) {
    std::span<const uint8_t> registers(bytes(hll) + kHeaderSize, kDenseSize - kHeaderSize);
    for (size_t i = 0; i < kRegisters; ++i) {
      const uint8_t v = dense_get(registers, i);
      if (v > max[i]) max[i] = v;
    }
    return true;
  }
  return walk_sparse(
      hll, [](size_t, int) {},
      [&](size_t index, int value, int run) {
        for (int i = 0; i < run; ++i) {
          if (value > max[index + i]) max[index + i] = static_cast<uint8_t>(value);
        }
      });
}

std::optional<uint64_t> estimate(std::string_view hll) {
  int histogram[64] = {0};
  if (encoding(hll) == kDense) {
    std::span<const uint8_t> registers(bytes(hll) + kHeaderSize, kDenseSize - kHeaderSize);
    for (size_t i = 0; i < kRegisters; ++i) ++histogram[dense_get(registers, i)];
  } else {
    const bool valid = walk_sparse(
        hll, [&](size_t, int run) { histogram[0] += run; },
        [&](size_t, int value, int run) { histogram[value] += run; });
    if (!valid) return std::nullopt;
  }
  return estimate_histogram(histogram);
}

uint64_t estimate(const Registers& registers) {
  int histogram[64] = {0};
  for (uint8_t v : registers) ++histogram[v & 63];
  return estimate_histogram(histogram);
}

std::string decode_sparse(std::string_view hll) {
  std::string out;
  const uint8_t* p = bytes(hll) + kHeaderSize;
  const uint8_t* end = bytes(hll) + hll.size();
  while (p < end) {
    if (is_zero(*p)) {
      out += "z:" + std::to_string(zero_len(*p)) + " ";
      ++p;
    } else if (is_xzero(*p)) {
      out += "Z:" + std::to_string(xzero_len(p[0], p + 1 < end ? p[1] : 0)) + " ";
      p += 2;
    } else {
      out += "v:" + std::to_string(val_value(*p)) + "," + std::to_string(val_len(*p)) + " ";
      ++p;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string self_test() {
  std::mt19937_64 rng(std::random_device{}());
  // Test 1: every register keeps its own value and leaves its neighbours alone.
  std::string dense(kDenseSize, '\0');
  std::span<uint8_t> registers(bytes(dense) + kHeaderSize, kDenseSize - kHeaderSize);
  Registers expected{};
  for (int cycle = 0; cycle < 1000; ++cycle) {
    for (size_t i = 0; i < kRegisters; ++i) {
      expected[i] = static_cast<uint8_t>(rng() & kRegisterMax);
      dense_set(registers, i, expected[i]);
    }
    for (size_t i = 0; i < kRegisters; ++i) {
      const uint8_t got = dense_get(registers, i);
      if (got != expected[i]) {
        return "TESTFAILED Register " + std::to_string(i) + " should be " +
               std::to_string(expected[i]) + " but is " + std::to_string(got);
      }
    }
  }
  // Test 2: dense and sparse sketches of the same elements agree, and the error stays within
  // six standard errors (1 at cardinality 10).
  std::memset(registers.data(), 0, registers.size());
  std::memcpy(dense.data(), "HYLL", 4);
  std::string sparse = create();
  const double relerr = 1.04 / std::sqrt(static_cast<double>(kRegisters));
  const uint64_t seed = rng();
  uint64_t checkpoint = 1;
  for (uint64_t j = 1; j <= 10000000; ++j) {
    const uint64_t element = j ^ seed;
    const std::string_view e(reinterpret_cast<const char*>(&element), sizeof(element));
    dense_add({bytes(dense), dense.size()}, e);
    add(sparse, e, kDefaultSparseMaxBytes);
    if (j != checkpoint) continue;
    if (j < kDefaultSparseMaxBytes / 2 && encoding(sparse) != kSparse) {
      return "TESTFAILED sparse encoding not used";
    }
    const uint64_t dense_count = estimate(dense).value_or(0);
    if (dense_count != estimate(sparse).value_or(0)) return "TESTFAILED dense/sparse disagree";
    const int64_t abserr =
        std::llabs(static_cast<int64_t>(checkpoint) - static_cast<int64_t>(dense_count));
    uint64_t maxerr =
        static_cast<uint64_t>(std::ceil(relerr * 6 * static_cast<double>(checkpoint)));
    if (j == 10) maxerr = 1;
    if (abserr > static_cast<int64_t>(maxerr)) {
      return "TESTFAILED Too big error. card:" + std::to_string(checkpoint) +
             " abserr:" + std::to_string(abserr);
    }
    checkpoint *= 10;
  }
  return "";
}

}  // namespace ringkv::engine::hll
