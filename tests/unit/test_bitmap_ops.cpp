// Bitmap operations (bitmap_ops.h): bit addressing, BITCOUNT/BITPOS ranges in bytes and bits,
// BITOP, BITFIELD's parsing, field access and overflow arithmetic, and the Store-level writes
// (creation, growth, encodings, TTLs), with results checked against redis-server 7.0.15.
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/keyspace/store.h"
#include "engine/types/bitmap_ops.h"
#include "protocol/errors.h"

using namespace ringkv::engine;
namespace err = ringkv::protocol::err;

namespace {

std::string value_of(Store& store, std::string_view key) {
  const Entry* e = store.peek(key);
  return e == nullptr ? "(nil)" : std::string(e->string_value());
}

}  // namespace

TEST_CASE("bit offsets parse as Redis's getBitOffsetFromArgument") {
  CHECK(*parse_bit_offset("0", 0, {}) == 0);
  CHECK(*parse_bit_offset("4294967295", 0, {}) == 4294967295ULL);
  CHECK(parse_bit_offset("4294967296", 0, {}).error() == err::kBitOffset);
  CHECK(parse_bit_offset("-1", 0, {}).error() == err::kBitOffset);
  CHECK(parse_bit_offset("x", 0, {}).error() == err::kBitOffset);
  CHECK(parse_bit_offset("#2", 0, {}).error() == err::kBitOffset);  // '#' only for BITFIELD
  CHECK(*parse_bit_offset("#2", 8, {}) == 16);
  CHECK(parse_bit_offset("#-1", 8, {}).error() == err::kBitOffset);
  // A smaller proto-max-bulk-len is asked only past the always-allowed 1 MB.
  CHECK(*parse_bit_offset("8388607", 0, [] { return int64_t{1}; }) == 8388607);
  CHECK(parse_bit_offset("16777216", 0, [] { return int64_t{2 * 1024 * 1024}; }).error() ==
        err::kBitOffset);
}

TEST_CASE("bits are numbered from the most significant bit of byte 0") {
  const std::string v("\x80\x01", 2);
  CHECK(bit_at(v, 0) == 1);
  CHECK(bit_at(v, 1) == 0);
  CHECK(bit_at(v, 15) == 1);
  CHECK(bit_at(v, 16) == 0);
  CHECK(bit_at(v, 1000000) == 0);
}

TEST_CASE("BITCOUNT counts whole values and byte or bit ranges") {
  const std::string v = "foobar";  // Redis's documentation example
  CHECK(count_bits(v) == 26);
  CHECK(count_bits(v, 0, 0, BitUnit::kByte) == 4);
  CHECK(count_bits(v, 1, 1, BitUnit::kByte) == 6);
  CHECK(count_bits(v, 1, 1, BitUnit::kBit) == 1);
  CHECK(count_bits(v, 5, 30, BitUnit::kBit) == 17);
  CHECK(count_bits(v, -1, -1, BitUnit::kByte) == 4);
  CHECK(count_bits(v, -1, -3, BitUnit::kByte) == 0);
  CHECK(count_bits(v, 0, 1000, BitUnit::kByte) == 26);
  CHECK(count_bits(v, 100, 1000, BitUnit::kBit) == 0);
  CHECK(count_bits("", 0, -1, BitUnit::kByte) == 0);
  const std::string ones(40, '\xff');
  CHECK(count_bits(ones) == 320);
  CHECK(count_bits(ones, 3, 316, BitUnit::kBit) == 314);
}

TEST_CASE("BITPOS finds set and clear bits with Redis's padding rules") {
  const std::string v("\xff\xf0\x00", 3);  // Redis's documentation example
  CHECK(find_bit(v, 0, 0, std::nullopt, BitUnit::kByte) == 12);
  CHECK(find_bit(v, 1, 2, std::nullopt, BitUnit::kByte) == -1);
  CHECK(find_bit(std::string("\x00\xff\xf0", 3), 1, 0, std::nullopt, BitUnit::kByte) == 8);
  CHECK(find_bit(std::string("\x00\xff\xf0", 3), 1, 2, -1, BitUnit::kByte) == 16);
  CHECK(find_bit(std::string("\x00\xff\xf0", 3), 1, 7, 15, BitUnit::kBit) == 8);
  // All ones: without an end the zero after the value counts; with one it does not.
  const std::string ones(3, '\xff');
  CHECK(find_bit(ones, 0, 0, std::nullopt, BitUnit::kByte) == 24);
  CHECK(find_bit(ones, 0, 0, -1, BitUnit::kByte) == -1);
  CHECK(find_bit(ones, 0, 0, -1, BitUnit::kBit) == -1);
  CHECK(find_bit("", 0, 0, std::nullopt, BitUnit::kByte) == -1);
  // Long runs are skipped a word at a time; the answer is the same.
  std::string long_run(100, '\0');
  long_run[77] = '\x04';
  CHECK(find_bit(long_run, 1, 0, std::nullopt, BitUnit::kByte) == 77 * 8 + 5);
  CHECK(find_bit(long_run, 1, 3, 700, BitUnit::kBit) == 77 * 8 + 5);
  CHECK(find_bit(long_run, 1, 3, 600, BitUnit::kBit) == -1);
}

TEST_CASE("BITOP computes over the longest source, shorter ones reading as zeros") {
  const std::vector<std::string_view> two = {"foobar", "abcdef"};
  CHECK(bit_op(BitOp::kAnd, two) == "`bc`ab");
  CHECK(bit_op(BitOp::kOr, two) == "goofev");
  const std::vector<std::string_view> uneven = {"ab", "a", ""};
  CHECK(bit_op(BitOp::kAnd, uneven) == std::string("\0\0", 2));
  CHECK(bit_op(BitOp::kXor, uneven) == std::string("\0b", 2));
  // A missing key is an empty view with no data: first or not, it reads as zeros.
  const std::vector<std::string_view> missing_first = {std::string_view(), "ab"};
  CHECK(bit_op(BitOp::kOr, missing_first) == "ab");
  CHECK(bit_op(BitOp::kAnd, missing_first) == std::string("\0\0", 2));
  const std::vector<std::string_view> one = {std::string_view("\x0f", 1)};
  CHECK(bit_op(BitOp::kNot, one) == "\xf0");
  CHECK(parse_bit_op("xOr") == BitOp::kXor);
  CHECK(parse_bit_op(std::string_view("and\0x", 5)) == BitOp::kAnd);
  CHECK_FALSE(parse_bit_op("nand"));
}

TEST_CASE("SETBIT creates, grows and flips, reporting a change only when there is one") {
  Store store;
  bool changed = false;
  CHECK(*set_bit(store, "k", 7, true, changed) == 0);
  CHECK(changed);
  CHECK(value_of(store, "k") == "\x01");
  CHECK(*set_bit(store, "k", 7, true, changed) == 1);
  CHECK_FALSE(changed);
  CHECK(*set_bit(store, "k", 23, false, changed) == 0);
  CHECK(changed);  // grown
  CHECK(value_of(store, "k") == std::string("\x01\0\0", 3));
  store.set_string("n", "123", Expiry::at(4102444800000));
  CHECK(*set_bit(store, "n", 0, false, changed) == 0);
  CHECK_FALSE(changed);
  CHECK(store.peek("n")->encoding() == StringEncoding::kRaw);  // as dbUnshareStringValue
  CHECK(store.peek("n")->expire_at() == 4102444800000);
}

TEST_CASE("BITOP stores a raw result without TTL, or deletes the destination") {
  Store store;
  store.set_string("a", "foobar", Expiry::none());
  store.set_string("d", "old", Expiry::at(4102444800000));
  bool changed = false;
  const std::vector<std::string_view> keys = {"a", "missing"};
  CHECK(*bit_op_store(store, BitOp::kOr, "d", keys, changed) == 6);
  CHECK(changed);
  CHECK(value_of(store, "d") == "foobar");
  CHECK(store.peek("d")->encoding() == StringEncoding::kRaw);
  CHECK(store.peek("d")->expire_at() == -1);
  const std::vector<std::string_view> empty = {"missing"};
  CHECK(*bit_op_store(store, BitOp::kAnd, "d", empty, changed) == 0);
  CHECK(changed);
  CHECK_FALSE(store.contains("d"));
  CHECK(*bit_op_store(store, BitOp::kAnd, "d", empty, changed) == 0);
  CHECK_FALSE(changed);
}

TEST_CASE("BITFIELD parses subcommands in order and reports the first error") {
  auto parse = [](std::vector<std::string_view> args) { return parse_bitfield(args, {}); };
  auto ops = parse({"GET", "u8", "0", "OVERFLOW", "sat", "INCRBY", "i5", "#3", "7"});
  REQUIRE(ops);
  REQUIRE((*ops).size() == 2);
  CHECK((*ops)[0].kind == BitfieldOp::kGet);
  CHECK((*ops)[0].overflow == BitfieldOverflow::kWrap);
  CHECK((*ops)[1].kind == BitfieldOp::kIncrBy);
  CHECK((*ops)[1].is_signed);
  CHECK((*ops)[1].bits == 5);
  CHECK((*ops)[1].offset == 15);
  CHECK((*ops)[1].value == 7);
  CHECK((*ops)[1].overflow == BitfieldOverflow::kSat);
  CHECK(parse({"GET", "u8"}).error() == err::kSyntax);
  CHECK(parse({"FOO"}).error() == err::kSyntax);
  CHECK(parse({"OVERFLOW", "x", "GET", "u8", "0"}).error() == err::kBitfieldOverflow);
  CHECK(parse({"GET", "u64", "0"}).error() == err::kBitfieldType);
  CHECK(parse({"GET", "i65", "0"}).error() == err::kBitfieldType);
  CHECK(parse({"GET", "I8", "0"}).error() == err::kBitfieldType);
  CHECK(parse({"GET", "i0", "0"}).error() == err::kBitfieldType);
  CHECK(parse({"GET", "u8", "-1"}).error() == err::kBitOffset);
  CHECK(parse({"SET", "u8", "0", "x"}).error() == err::kNotInteger);
  CHECK((*parse({})).empty());
}

TEST_CASE("BITFIELD fields and overflow follow Redis's arithmetic") {
  std::string v(9, '\0');
  std::span<uint8_t> bytes(reinterpret_cast<uint8_t*>(v.data()), v.size());
  set_field(bytes, 3, 5, 0x1f);
  CHECK(v[0] == '\x1f');
  CHECK(get_unsigned_field(v, 3, 5) == 31);
  CHECK(get_signed_field(v, 3, 5) == -1);
  set_field(bytes, 0, 64, 0x8000000000000001ULL);
  CHECK(get_signed_field(v, 0, 64) == INT64_MIN + 1);
  CHECK(get_unsigned_field("", 100, 63) == 0);

  uint64_t ul = 0;
  CHECK(unsigned_field_overflow(250, 10, 8, BitfieldOverflow::kWrap, ul) == 1);
  CHECK(ul == 4);
  CHECK(unsigned_field_overflow(250, 10, 8, BitfieldOverflow::kSat, ul) == 1);
  CHECK(ul == 255);
  CHECK(unsigned_field_overflow(5, -10, 8, BitfieldOverflow::kSat, ul) == -1);
  CHECK(ul == 0);
  CHECK(unsigned_field_overflow(5, -5, 8, BitfieldOverflow::kFail, ul) == 0);
  int64_t sl = 0;
  CHECK(signed_field_overflow(100, 100, 8, BitfieldOverflow::kWrap, sl) == 1);
  CHECK(sl == -56);
  CHECK(signed_field_overflow(100, 100, 8, BitfieldOverflow::kSat, sl) == 1);
  CHECK(sl == 127);
  CHECK(signed_field_overflow(-100, -100, 8, BitfieldOverflow::kSat, sl) == -1);
  CHECK(sl == -128);
  CHECK(signed_field_overflow(INT64_MAX, 1, 64, BitfieldOverflow::kWrap, sl) == 1);
  CHECK(sl == INT64_MIN);
  CHECK(signed_field_overflow(-1, INT64_MIN, 64, BitfieldOverflow::kSat, sl) == -1);
  CHECK(sl == INT64_MIN);
  CHECK(signed_field_overflow(-5, 3, 64, BitfieldOverflow::kFail, sl) == 0);
}

TEST_CASE("BITFIELD on the Store: replies, FAIL, growth and read-only lookups") {
  Store store;
  size_t changed = 0;
  auto ops = parse_bitfield(
      std::vector<std::string_view>{"SET", "i8", "0", "100", "GET", "i8", "0", "OVERFLOW", "FAIL",
                                    "INCRBY", "i8", "0", "100", "INCRBY", "u2", "#100", "1"},
      {});
  REQUIRE(ops);
  auto replies = bitfield(store, "k", *ops, changed);
  REQUIRE(replies);
  CHECK(*replies == std::vector<std::optional<int64_t>>{0, 100, std::nullopt, 1});
  CHECK(changed == 2);  // the refused INCRBY does not count
  CHECK(value_of(store, "k").size() == 26);
  // Writing the value a field already holds is no change, as in Redis 7.0.
  auto same = parse_bitfield(
      std::vector<std::string_view>{"SET", "i8", "0", "100", "INCRBY", "u4", "0", "0"}, {});
  CHECK(*bitfield(store, "k", *same, changed) == std::vector<std::optional<int64_t>>{100, 6});
  CHECK(changed == 0);
  // Only refused writes, but the key was created for them: recorded as a change.
  auto fail = parse_bitfield(
      std::vector<std::string_view>{"OVERFLOW", "FAIL", "INCRBY", "u2", "0", "100"}, {});
  CHECK(*bitfield(store, "new", *fail, changed) ==
        std::vector<std::optional<int64_t>>{std::nullopt});
  CHECK(changed == 1);
  CHECK(value_of(store, "new") == std::string(1, '\0'));
  auto get = parse_bitfield(std::vector<std::string_view>{"GET", "u8", "0"}, {});
  CHECK(*bitfield(store, "missing", *get, changed) == std::vector<std::optional<int64_t>>{0});
  CHECK(changed == 0);
  CHECK_FALSE(store.contains("missing"));
}
