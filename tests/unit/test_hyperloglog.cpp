// HyperLogLog sketches (hyperloglog.h, hyperloglog_ops.h): Redis's byte format — header, cache
// bit, sparse opcodes, dense packing, promotion — and its estimates, checked against bytes and
// counts redis-server 7.0.15 produced for the same elements.
#include <doctest/doctest.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/keyspace/store.h"
#include "engine/types/hyperloglog.h"
#include "engine/types/hyperloglog_ops.h"
#include "protocol/errors.h"

using namespace ringkv::engine;
namespace err = ringkv::protocol::err;

namespace {

uint64_t fnv1a(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

// PFADD, ignoring whether the stored value changed.
Result<bool> add(Store& store, std::string_view key, std::span<const std::string_view> elements) {
  bool modified = false;
  return pf_add(store, key, elements, modified);
}

std::string value_of(Store& store, std::string_view key) {
  return std::string(store.peek(key)->string_value());
}

// PFADD key e1 e2 ... en, one element per command as a client would send them.
void add_numbered(Store& store, std::string_view key, int n) {
  for (int i = 1; i <= n; ++i) {
    const std::string element = "e" + std::to_string(i);
    const std::vector<std::string_view> elements = {element};
    REQUIRE(add(store, key, elements));
  }
}

}  // namespace

TEST_CASE("MurmurHash64A and the register pattern match Redis") {
  // Redis's PFADD of "a", "b", "c" sets these registers (see the sparse bytes below).
  CHECK(hll::murmur_hash64a("", 0) == 0);
  const hll::Pattern a = hll::pattern("a");
  CHECK(a.index < hll::kRegisters);
  CHECK(a.count >= 1);
  CHECK(a.count <= hll::kQ + 1);
}

TEST_CASE("an empty sketch is one XZERO and a valid cached 0") {
  const std::string empty = hll::create();
  CHECK(empty == std::string("HYLL\x01\0\0\0\0\0\0\0\0\0\0\0\x7f\xff", 18));
  CHECK(hll::is_hll(empty));
  CHECK(hll::cached_count(empty) == 0u);
  CHECK(hll::decode_sparse(empty) == "Z:16384");
  CHECK(hll::estimate(empty) == 0u);
}

TEST_CASE("PFADD writes Redis's sparse bytes and PFCOUNT caches the estimate") {
  Store store;
  const std::vector<std::string_view> abc = {"a", "b", "c"};
  CHECK(*add(store, "h", abc));
  CHECK(value_of(store, "h") ==
        std::string("HYLL\x01\0\0\0\0\0\0\0\0\0\0\x80`\xf3\x80P\xb1\x84K\xfb\x80"
                    "BZ",
                    27));
  CHECK(store.peek("h")->encoding() == StringEncoding::kRaw);
  bool modified = true;
  CHECK_FALSE(*pf_add(store, "h", abc, modified));
  CHECK_FALSE(modified);
  bool changed = false;
  const std::vector<std::string_view> keys = {"h"};
  CHECK(*pf_count(store, keys, changed) == 3);
  CHECK(changed);
  CHECK(value_of(store, "h") ==
        std::string("HYLL\x01\0\0\0\x03\0\0\0\0\0\0\0`\xf3\x80P\xb1\x84K\xfb\x80"
                    "BZ",
                    27));
  CHECK(*pf_count(store, keys, changed) == 3);
  CHECK_FALSE(changed);
  // PFADD of no element creates the key, with its cache marked stale.
  CHECK(*add(store, "e", {}));
  CHECK(value_of(store, "e") == std::string("HYLL\x01\0\0\0\0\0\0\0\0\0\0\x80\x7f\xff", 18));
}

TEST_CASE("sparse and dense sketches equal Redis's after many elements") {
  Store store;
  bool changed = false;
  const std::vector<std::string_view> h3 = {"h3"};
  const std::vector<std::string_view> h4 = {"h4"};
  add_numbered(store, "h4", 300);
  CHECK(*pf_count(store, h4, changed) == 302);  // Redis's bytes below carry the cached count
  CHECK(hll::encoding(value_of(store, "h4")) == hll::kSparse);
  CHECK(value_of(store, "h4").size() == 713);
  CHECK(fnv1a(value_of(store, "h4")) == 0xc4e2065cc5fcc5cbULL);
  add_numbered(store, "h3", 2000);
  CHECK(hll::encoding(value_of(store, "h3")) == hll::kDense);
  CHECK(value_of(store, "h3").size() == hll::kDenseSize);
  CHECK(*pf_count(store, h3, changed) == 2000);
  CHECK(fnv1a(value_of(store, "h3")) == 0xf22df3b1bdfa5c7bULL);
  // The union of a subset is the superset's estimate.
  const std::vector<std::string_view> both = {"h3", "h4", "missing"};
  CHECK(*pf_count(store, both, changed) == 2000);
  CHECK_FALSE(changed);
}

TEST_CASE("sparse_to_dense keeps every register; dense registers pack 6 bits") {
  Store store;
  add_numbered(store, "s", 300);
  std::string sparse = value_of(store, "s");
  hll::Registers from_sparse{};
  REQUIRE(hll::merge_into(from_sparse, sparse));
  std::string dense = sparse;
  REQUIRE(hll::sparse_to_dense(dense));
  CHECK(dense.size() == hll::kDenseSize);
  CHECK(dense.substr(5, 11) == sparse.substr(5, 11));
  hll::Registers from_dense{};
  REQUIRE(hll::merge_into(from_dense, dense));
  CHECK(from_sparse == from_dense);
  CHECK(hll::estimate(dense) == hll::estimate(sparse));

  std::vector<uint8_t> registers(hll::kDenseSize - hll::kHeaderSize, 0);
  hll::dense_set(registers, 0, 63);
  hll::dense_set(registers, 1, 1);
  hll::dense_set(registers, hll::kRegisters - 1, 42);
  CHECK(registers[0] == 0x7f);
  CHECK(registers[1] == 0x00);
  CHECK(hll::dense_get(registers, 0) == 63);
  CHECK(hll::dense_get(registers, 1) == 1);
  CHECK(hll::dense_get(registers, 2) == 0);
  CHECK(hll::dense_get(registers, hll::kRegisters - 1) == 42);
}

TEST_CASE("sparse_set splits and merges opcodes as Redis does") {
  std::string s = hll::create();
  CHECK(hll::sparse_set(s, 100, 3, hll::kDefaultSparseMaxBytes) == 1);
  CHECK(hll::decode_sparse(s) == "Z:100 v:3,1 Z:16283");
  CHECK(hll::sparse_set(s, 101, 3, hll::kDefaultSparseMaxBytes) == 1);
  CHECK(hll::decode_sparse(s) == "Z:100 v:3,2 Z:16282");
  CHECK(hll::sparse_set(s, 100, 2, hll::kDefaultSparseMaxBytes) == 0);
  CHECK(hll::sparse_set(s, 0, 1, hll::kDefaultSparseMaxBytes) == 1);
  CHECK(hll::decode_sparse(s) == "v:1,1 Z:99 v:3,2 Z:16282");
  // A value over 32 cannot be sparse.
  CHECK(hll::sparse_set(s, 5, 33, hll::kDefaultSparseMaxBytes) == 1);
  CHECK(hll::encoding(s) == hll::kDense);
  // Growth past the byte limit promotes too.
  std::string t = hll::create();
  CHECK(hll::sparse_set(t, 100, 3, 19) == 1);
  CHECK(hll::encoding(t) == hll::kDense);
}

TEST_CASE("sparse_set on an XZERO cut short by the end of the string sizes it as Redis does") {
  // Redis reads the missing second byte as the string's terminator (a run of 14337 registers
  // for 'x') and grows the string by the new sequence's length less 2, so the sequence's last
  // byte falls off the end (redis-server 7.0.15: APPEND an 'x' to an empty sketch's header,
  // then PFADD).
  std::string s = hll::create().substr(0, hll::kHeaderSize) + "x";
  CHECK(hll::sparse_set(s, 5, 1, hll::kDefaultSparseMaxBytes) == 1);
  // ZERO:5, VAL:1,1 and the first byte of XZERO:14331.
  CHECK(s.substr(hll::kHeaderSize) == std::string("\x04\x80\x77"));
}

TEST_CASE("sketch checks: wrong types, foreign strings, corrupt opcodes") {
  Store store;
  store.set_string("s", "not an hll", Expiry::none());
  store.set_string("i", "12345", Expiry::none());
  std::string corrupt = hll::create();
  corrupt[hll::kHeaderSize] = '\x00';  // ZERO:1 then a stray byte: runs do not add up
  hll::invalidate_cache({reinterpret_cast<uint8_t*>(corrupt.data()), hll::kHeaderSize});
  store.set_string("c", corrupt, Expiry::none());
  store.set_string("d", std::string("HYLL\0", 5) + std::string(11, '\0'), Expiry::none());
  const std::vector<std::string_view> a = {"a"};
  CHECK(add(store, "s", a).error() == err::kNotHll);
  CHECK(add(store, "i", a).error() == err::kNotHll);
  CHECK(add(store, "d", a).error() == err::kNotHll);  // dense but not 12304 bytes
  bool changed = false;
  const std::vector<std::string_view> c = {"c"};
  CHECK(pf_count(store, c, changed).error() == err::kInvalidHll);
  const std::vector<std::string_view> merge = {"dest", "c"};
  CHECK(pf_merge(store, merge).error() == err::kInvalidHll);
  // Every register covered, then one VAL more: corrupt (Redis with the CVE-2025-32023 fix stops
  // at the first run past the end instead of ignoring it).
  std::string overlong = hll::create() + "\x80";
  hll::invalidate_cache({reinterpret_cast<uint8_t*>(overlong.data()), hll::kHeaderSize});
  store.set_string("o", overlong, Expiry::none());
  const std::vector<std::string_view> o = {"o"};
  CHECK(pf_count(store, o, changed).error() == err::kInvalidHll);
  const std::vector<std::string_view> merge_o = {"dest", "o"};
  CHECK(pf_merge(store, merge_o).error() == err::kInvalidHll);
  hll::Registers max{};
  CHECK_FALSE(hll::merge_into(max, overlong));
  CHECK(pf_debug_lookup(store, "missing").error() == err::kHllKeyMissing);
}

TEST_CASE("PFMERGE takes the max per register and goes dense with a dense input") {
  Store store;
  add_numbered(store, "big", 2000);
  const std::vector<std::string_view> xy = {"x", "y"};
  REQUIRE(add(store, "small", xy));
  const std::vector<std::string_view> keys = {"dest", "small"};
  REQUIRE(pf_merge(store, keys));
  CHECK(hll::encoding(value_of(store, "dest")) == hll::kSparse);
  bool changed = false;
  const std::vector<std::string_view> dest = {"dest"};
  CHECK(*pf_count(store, dest, changed) == 2);
  const std::vector<std::string_view> keys2 = {"dest", "big"};
  REQUIRE(pf_merge(store, keys2));
  CHECK(hll::encoding(value_of(store, "dest")) == hll::kDense);
  CHECK(*pf_count(store, dest, changed) == 2002);
}

TEST_CASE("PFSELFTEST passes") { CHECK(hll::self_test() == ""); }
