// RDB value encoding: CRC64, the listpack/intset/ziplist/zipmap readers and writers, string
// encodings, and round trips of every type and encoding through dump_payload/decode_value.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "engine/keyspace/store.h"
#include "engine/rdb/crc64.h"
#include "engine/rdb/rdb_format.h"
#include "engine/rdb/rdb_value.h"
#include "engine/types/hash_type.h"
#include "engine/types/list_type.h"
#include "engine/types/object.h"
#include "engine/types/set_type.h"
#include "engine/types/zset_type.h"

using namespace ringkv::engine;
namespace rdb = ringkv::engine::rdb;

namespace {

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int x : b) s.push_back(static_cast<char>(x));
  return s;
}

std::vector<std::string> listpack_elements(std::string_view lp) {
  std::vector<std::string> out;
  const bool ok = rdb::listpack_for_each(lp, [&](std::string_view e) {
    out.emplace_back(e);
    return true;
  });
  REQUIRE(ok);
  return out;
}

std::string encoded_string(std::string_view s) {
  std::string out;
  rdb::write_string(out, s);
  return out;
}

std::string read_back(const std::string& enc) {
  rdb::Reader r(enc);
  std::string s;
  REQUIRE(r.read_string(s));
  CHECK(r.remaining() == 0);
  return s;
}

// DUMPs `key`, decodes the payload into `key` of a second store, and returns that entry.
const Entry* round_trip(Store& from, Store& to, std::string_view key) {
  const Entry* e = from.peek(key);
  REQUIRE(e != nullptr);
  const std::string payload = dump_payload(*e);
  REQUIRE(verify_dump_payload(payload));
  DecodedValue v;
  REQUIRE(decode_value(payload, v));
  to.erase(key);
  return store_decoded(to, key, std::move(v), e->expire_at());
}

}  // namespace

TEST_CASE("crc64 matches Redis's check value") {
  CHECK(crc64(0, "123456789") == 0xe9c6d914c4b8d9caULL);
  CHECK(crc64(0, "") == 0);
  std::string long_input;
  for (int i = 0; i < 1000; ++i) long_input.push_back(static_cast<char>(i * 31));
  uint64_t bytewise = 0;
  for (char c : long_input) bytewise = crc64(bytewise, std::string_view(&c, 1));
  CHECK(crc64(0, long_input) == bytewise);
}

TEST_CASE("lengths use Redis's 6, 14, 32 and 64-bit forms") {
  auto len = [](uint64_t n) {
    std::string out;
    rdb::write_len(out, n);
    rdb::Reader r(out);
    uint64_t back = 0;
    REQUIRE(r.read_len(back));
    CHECK(back == n);
    return out;
  };
  CHECK(len(0) == bytes({0}));
  CHECK(len(63) == bytes({63}));
  CHECK(len(64) == bytes({0x40, 64}));
  CHECK(len(16383) == bytes({0x7f, 0xff}));
  CHECK(len(16384) == bytes({0x80, 0, 0, 0x40, 0}));
  CHECK(len(uint64_t{1} << 32) == bytes({0x81, 0, 0, 0, 1, 0, 0, 0, 0}));
}

TEST_CASE("strings: integer encodings, LZF, verbatim") {
  CHECK(encoded_string("0") == bytes({0xc0, 0}));
  CHECK(encoded_string("-128") == bytes({0xc0, 0x80}));
  CHECK(encoded_string("127") == bytes({0xc0, 0x7f}));
  CHECK(encoded_string("128") == bytes({0xc1, 0x80, 0}));
  CHECK(encoded_string("-32768") == bytes({0xc1, 0, 0x80}));
  CHECK(encoded_string("32768") == bytes({0xc2, 0, 0x80, 0, 0}));
  CHECK(encoded_string("-2147483648") == bytes({0xc2, 0, 0, 0, 0x80}));
  // Outside int32, non-canonical forms, and empty strings stay verbatim.
  CHECK(encoded_string("2147483648") == bytes({10}) + "2147483648");
  CHECK(encoded_string("007") == bytes({3}) + "007");
  CHECK(encoded_string("+1") == bytes({2}) + "+1");
  CHECK(encoded_string("") == bytes({0}));
  for (std::string s : {"0", "-1", "127", "-129", "65535", "-2147483648", "2147483647",
                        "9223372036854775807", "", "abc", "007"}) {
    CHECK(read_back(encoded_string(s)) == s);
  }
  const std::string repetitive(1000, 'a');
  const std::string enc = encoded_string(repetitive);
  CHECK(static_cast<uint8_t>(enc[0]) == 0xc3);
  CHECK(enc.size() < 100);
  CHECK(read_back(enc) == repetitive);
  // Incompressible data over 20 bytes is stored verbatim.
  std::string noise;
  for (int i = 0; i < 30; ++i) noise.push_back(static_cast<char>((i * 97 + 13) % 251));
  CHECK(encoded_string(noise) == bytes({30}) + noise);
  std::string binary("\0\xff\r\n", 4);
  CHECK(read_back(encoded_string(binary)) == binary);
}

TEST_CASE("malformed strings are refused") {
  for (const std::string& bad :
       {bytes({5, 'a'}), bytes({0xc1, 1}), bytes({0xc4}), bytes({0x82}),
        bytes({0xc3, 2, 0x7f, 1, 2}), bytes({0xc3, 3, 10, 0x02, 'a', 'b'})}) {
    rdb::Reader r(bad);
    std::string s;
    CHECK_FALSE(r.read_string(s));
  }
}

TEST_CASE("listpack writer uses Redis's entry encodings") {
  rdb::ListpackWriter w;
  w.add("1");
  w.add("a");
  const std::string lp = w.finish();
  CHECK(lp == bytes({12, 0, 0, 0, 2, 0, 0x01, 0x01, 0x81, 'a', 0x02, 0xff}));
  rdb::ListpackWriter all;
  const std::vector<std::string> elements = {"0",
                                             "127",
                                             "128",
                                             "-1",
                                             "-4096",
                                             "4095",
                                             "4096",
                                             "-32768",
                                             "32767",
                                             "8388607",
                                             "-8388609",
                                             "2147483647",
                                             "9223372036854775807",
                                             "-9223372036854775808",
                                             "",
                                             "x",
                                             std::string(63, 'y'),
                                             std::string(64, 'z'),
                                             std::string(4095, 'w'),
                                             std::string(5000, 'v'),
                                             "01",
                                             "-0",
                                             "1.5"};
  for (const auto& e : elements) all.add(e);
  CHECK(listpack_elements(all.finish()) == elements);
  // 13-bit integer: -1 is 0xdf 0xff.
  rdb::ListpackWriter neg;
  neg.add("-1");
  CHECK(neg.finish().substr(6, 3) == bytes({0xdf, 0xff, 0x02}));
}

TEST_CASE("an integer element's listpack size is its decimal text's, at every width's edges") {
  const int64_t edges[] = {0,         127,
                           128,       -1,
                           -4096,     -4097,
                           4095,      4096,
                           -32768,    -32769,
                           32767,     32768,
                           8388607,   8388608,
                           -8388608,  -8388609,
                           INT32_MAX, int64_t{INT32_MAX} + 1,
                           INT32_MIN, int64_t{INT32_MIN} - 1,
                           INT64_MAX, INT64_MIN};
  for (const int64_t v : edges) {
    CAPTURE(v);
    CHECK(rdb::listpack_int_element_size(v) == rdb::listpack_element_size(std::to_string(v)));
  }
}

TEST_CASE("listpack reader refuses malformed blobs") {
  rdb::ListpackWriter w;
  w.add("hello");
  w.add("12345");
  const std::string good = w.finish();
  CHECK(rdb::listpack_for_each(good, [](std::string_view) { return true; }));
  auto bad = [](std::string lp) {
    return !rdb::listpack_for_each(lp, [](std::string_view) { return true; });
  };
  CHECK(bad(good.substr(0, good.size() - 1)));
  std::string wrong_total = good;
  wrong_total[0] = static_cast<char>(good.size() + 1);
  CHECK(bad(wrong_total));
  std::string wrong_count = good;
  wrong_count[4] = 3;
  CHECK(bad(wrong_count));
  std::string long_string = good;
  long_string[6] = static_cast<char>(0x80 | 60);  // claims 60 bytes
  CHECK(bad(long_string));
  std::string bad_backlen = good;
  bad_backlen[6 + 1 + 5] = 9;
  CHECK(bad(bad_backlen));
  CHECK(bad(bytes({7, 0, 0, 0, 0, 0, 0xfe})));
}

TEST_CASE("intset blobs at every width") {
  std::vector<int64_t> small = {-5, 0, 7};
  std::string is = rdb::intset_bytes(small);
  CHECK(is == bytes({2, 0, 0, 0, 3, 0, 0, 0, 0xfb, 0xff, 0, 0, 7, 0}));
  for (std::vector<int64_t> values :
       {std::vector<int64_t>{-40000, 1}, std::vector<int64_t>{1, int64_t{1} << 40},
        std::vector<int64_t>{std::numeric_limits<int64_t>::min(), 0,
                             std::numeric_limits<int64_t>::max()}}) {
    std::vector<int64_t> back;
    CHECK(rdb::intset_for_each(rdb::intset_bytes(values), [&](int64_t v) {
      back.push_back(v);
      return true;
    }));
    CHECK(back == values);
  }
  CHECK(rdb::intset_bytes(std::vector<int64_t>{-40000, 1}).substr(0, 1) == bytes({4}));
  auto ok = [](std::string s) { return rdb::intset_for_each(s, [](int64_t) { return true; }); };
  CHECK_FALSE(ok(bytes({3, 0, 0, 0, 1, 0, 0, 0, 1, 2, 3})));     // width 3
  CHECK_FALSE(ok(bytes({2, 0, 0, 0, 2, 0, 0, 0, 1, 0})));        // too short
  CHECK_FALSE(ok(bytes({2, 0, 0, 0, 2, 0, 0, 0, 2, 0, 1, 0})));  // descending
}

TEST_CASE("ziplist and zipmap readers (older encodings)") {
  // A ziplist of "a", 5 (immediate), 300 (int16): prevlen, encoding, data.
  std::string entries = bytes({0, 0x01, 'a', 3, 0xf6, 2, 0xc0, 0x2c, 0x01});
  std::string zl = bytes({0, 0, 0, 0, 0, 0, 0, 0, 3, 0}) + entries + bytes({0xff});
  zl[0] = static_cast<char>(zl.size());
  zl[4] = static_cast<char>(10 + 5);
  std::vector<std::string> got;
  CHECK(rdb::ziplist_for_each(zl, [&](std::string_view e) {
    got.emplace_back(e);
    return true;
  }));
  CHECK(got == std::vector<std::string>{"a", "5", "300"});
  std::string bad_prev = zl;
  bad_prev[10 + 3] = 7;
  CHECK_FALSE(rdb::ziplist_for_each(bad_prev, [](std::string_view) { return true; }));
  // zipmap: zmlen, klen, key, vlen, free, value, end.
  std::string zm = bytes({1, 1, 'f', 2, 1, 'v', 'w', 0, 0xff});
  got.clear();
  CHECK(rdb::zipmap_for_each(zm, [&](std::string_view e) {
    got.emplace_back(e);
    return true;
  }));
  CHECK(got == std::vector<std::string>{"f", "vw"});
  CHECK_FALSE(rdb::zipmap_for_each(bytes({1, 1, 'f', 9, 0, 'v', 0xff}),
                                   [](std::string_view) { return true; }));
}

TEST_CASE("double_to_string is Redis's d2string") {
  char buf[32];
  CHECK(rdb::double_to_string(1.0, buf) == "1");
  CHECK(rdb::double_to_string(-0.0, buf) == "-0");
  CHECK(rdb::double_to_string(1.5, buf) == "1.5");
  CHECK(rdb::double_to_string(0.1, buf) == "0.10000000000000001");
  CHECK(rdb::double_to_string(std::numeric_limits<double>::infinity(), buf) == "inf");
  CHECK(rdb::double_to_string(-std::numeric_limits<double>::infinity(), buf) == "-inf");
  CHECK(rdb::double_to_string(1e20, buf) == "1e+20");
}

TEST_CASE("a known Redis 7.0 payload: DUMP of SET k 1") {
  Store store;
  store.set_string("k", "1", Expiry::none());
  const std::string payload = dump_payload(*store.peek("k"));
  // redis-server 7.0.15: "\x00\xc0\x01\n\x00" + CRC64.
  CHECK(payload.substr(0, 5) == bytes({0, 0xc0, 1, 10, 0}));
  CHECK(payload.size() == 13);
  CHECK(verify_dump_payload(payload));
  std::string corrupt = payload;
  corrupt[2] = 2;
  CHECK_FALSE(verify_dump_payload(corrupt));
  std::string newer = payload;
  newer[3] = 11;
  CHECK_FALSE(verify_dump_payload(newer));
  CHECK_FALSE(verify_dump_payload("short"));
}

TEST_CASE("round trips keep every type, encoding and TTL") {
  Store a;
  Store b;
  a.set_now(1'700'000'000'000);
  b.set_now(1'700'000'000'000);
  SUBCASE("strings of every encoding") {
    const std::vector<std::string> values = {"",
                                             "0",
                                             "-1",
                                             "127",
                                             "-128",
                                             "300",
                                             "-40000",
                                             "2147483647",
                                             "2147483648",
                                             "-9223372036854775808",
                                             "12abc",
                                             std::string(44, 'e'),
                                             std::string(45, 'r'),
                                             std::string(100000, 'z'),
                                             std::string("bin\0ary\xff", 8)};
    for (size_t i = 0; i < values.size(); ++i) {
      const std::string key = "s" + std::to_string(i);
      a.set_string(key, values[i], i % 2 ? Expiry::at(1'700'000'100'000) : Expiry::none());
      const Entry* e = round_trip(a, b, key);
      CHECK(e->string_value() == values[i]);
      CHECK(e->encoding() == a.peek(key)->encoding());
      CHECK(e->expire_at() == a.peek(key)->expire_at());
    }
  }
  SUBCASE("lists, small and over many nodes") {
    for (size_t n : {1, 5, 1000, 20000}) {
      auto w = write_object<ListObject>(a, "l", true);
      for (size_t i = 0; i < n; ++i)
        w.value()->push(ListObject::End::kTail,
                        i % 3 ? std::to_string(i * 7919) : std::string(i % 100, 'x'));
      w.value().finish();
      const Entry* e = round_trip(a, b, "l");
      const auto& want = static_cast<const ListObject&>(*a.peek("l")->object());
      const auto& got = static_cast<const ListObject&>(*e->object());
      REQUIRE(got.size() == want.size());
      for (size_t i = 0; i < n; i += 97) CHECK(got.at(i) == want.at(i));
      CHECK(got.at(n - 1) == want.at(n - 1));
      a.erase("l");
    }
  }
  SUBCASE("sets: intset and hashtable") {
    auto fill = [&](std::string_view key, size_t n, bool ints) {
      auto w = write_object<SetObject>(a, key, true);
      for (size_t i = 0; i < n; ++i)
        w.value()->add(ints ? std::to_string(static_cast<int64_t>(i * 1000003) - 5000)
                            : "m" + std::to_string(i));
    };
    fill("ints", 100, true);
    fill("bigints", 600, true);
    fill("strs", 50, false);
    auto w = write_object<SetObject>(a, "wide", true);
    w.value()->add("9223372036854775807");
    w.value()->add("-3");
    w.value().finish();
    for (const char* key : {"ints", "bigints", "strs", "wide"}) {
      const Entry* e = round_trip(a, b, key);
      const auto& want = static_cast<const SetObject&>(*a.peek(key)->object());
      const auto& got = static_cast<const SetObject&>(*e->object());
      CHECK(got.encoding_name() == want.encoding_name());
      CHECK(got.size() == want.size());
      want.for_each([&](std::string_view m) { CHECK(got.contains(m)); });
    }
  }
  SUBCASE("sorted sets: listpack and skiplist") {
    auto fill = [&](std::string_view key, size_t n, size_t member_len) {
      auto w = write_object<ZSetObject>(a, key, true);
      for (size_t i = 0; i < n; ++i) {
        std::string member = "m" + std::to_string(i);
        member.resize(std::max(member.size(), member_len), '_');
        const double score = i % 5 == 0   ? static_cast<double>(i)
                             : i % 5 == 1 ? -1.0 / static_cast<double>(i + 3)
                             : i % 5 == 2 ? std::numeric_limits<double>::infinity()
                                          : 1e300 / static_cast<double>(i + 1);
        w.value()->set(member, score);
      }
    };
    fill("small", 20, 1);
    fill("big", 500, 1);
    fill("longmember", 3, 100);
    for (const char* key : {"small", "big", "longmember"}) {
      const Entry* e = round_trip(a, b, key);
      const auto& want = static_cast<const ZSetObject&>(*a.peek(key)->object());
      const auto& got = static_cast<const ZSetObject&>(*e->object());
      CHECK(got.encoding_name() == want.encoding_name());
      REQUIRE(got.size() == want.size());
      want.for_each([&](std::string_view m, double s) {
        const auto score = got.score(m);
        REQUIRE(score.has_value());
        CHECK(std::memcmp(&*score, &s, sizeof(s)) == 0);
      });
    }
  }
  SUBCASE("hashes: listpack and hashtable") {
    auto fill = [&](std::string_view key, size_t n, size_t value_len) {
      auto w = write_object<HashObject>(a, key, true);
      for (size_t i = 0; i < n; ++i)
        w.value()->set("f" + std::to_string(i), std::string(value_len, 'v') + std::to_string(i));
    };
    fill("small", 10, 2);
    fill("many", 1000, 0);
    fill("longvalue", 2, 100);
    for (const char* key : {"small", "many", "longvalue"}) {
      const Entry* e = round_trip(a, b, key);
      const auto& want = static_cast<const HashObject&>(*a.peek(key)->object());
      const auto& got = static_cast<const HashObject&>(*e->object());
      CHECK(got.encoding_name() == want.encoding_name());
      CHECK(got.size() == want.size());
      want.for_each([&](std::string_view f, std::string_view v) { CHECK(got.get(f) == v); });
    }
  }
  CHECK(a.used_memory() > 0);
}

TEST_CASE("decoding older encodings and refusing bad values") {
  auto decode = [](const std::string& value) {
    DecodedValue v;
    return decode_value(value, v) ? std::move(v.object) : nullptr;
  };
  // RDB_TYPE_LIST: a length and strings.
  auto list = decode(bytes({rdb::kTypeList, 2, 1, 'a', 0xc0, 7}));
  REQUIRE(list != nullptr);
  CHECK(static_cast<ListObject&>(*list).at(1) == "7");
  // RDB_TYPE_ZSET: text doubles, 254 = +inf.
  auto zset = decode(bytes({rdb::kTypeZSet, 2, 1, 'a', 3, '1', '.', '5', 1, 'b', 254}));
  REQUIRE(zset != nullptr);
  CHECK(static_cast<ZSetObject&>(*zset).score("a") == 1.5);
  CHECK(std::isinf(*static_cast<ZSetObject&>(*zset).score("b")));
  // RDB_TYPE_HASH_ZIPMAP.
  const std::string zm = bytes({1, 1, 'f', 1, 0, 'v', 0xff});
  auto hash = decode(bytes({rdb::kTypeHashZipmap, static_cast<int>(zm.size())}) + zm);
  REQUIRE(hash != nullptr);
  CHECK(static_cast<HashObject&>(*hash).get("f") == "v");
  // Empty collections, duplicates, unknown types, truncation.
  CHECK(decode(bytes({rdb::kTypeSet, 0})) == nullptr);
  CHECK(decode(bytes({rdb::kTypeSet, 2, 1, 'a', 1, 'a'})) == nullptr);
  CHECK(decode(bytes({rdb::kTypeHash, 2, 1, 'a', 0, 1, 'a', 0})) == nullptr);
  CHECK(decode(bytes({7, 0})) == nullptr);
  CHECK(decode(bytes({rdb::kTypeList, 3, 1, 'a'})) == nullptr);
  CHECK(decode(bytes({rdb::kTypeListQuicklist2, 1, 3, 1, 'a'})) == nullptr);
  CHECK(decode(bytes({rdb::kTypeZSet2, 1, 1, 'a', 0, 0, 0})) == nullptr);
}

namespace {

// A ziplist (Redis before 7.0) of short strings and, for "0".."12", immediate integers.
std::string ziplist(std::initializer_list<std::string> elements) {
  std::string entries;
  size_t prev = 0;
  size_t tail = 10;
  for (const std::string& e : elements) {
    tail = 10 + entries.size();
    std::string entry(1, static_cast<char>(prev));
    if (e.size() <= 2 && e.find_first_not_of("0123456789") == std::string::npos &&
        std::stoi(e) <= 12) {
      entry.push_back(static_cast<char>(0xf1 + std::stoi(e)));
    } else {
      entry.push_back(static_cast<char>(e.size()));
      entry += e;
    }
    prev = entry.size();
    entries += entry;
  }
  std::string zl =
      bytes({0, 0, 0, 0, static_cast<int>(tail), 0, 0, 0, static_cast<int>(elements.size()), 0}) +
      entries + bytes({0xff});
  zl[0] = static_cast<char>(zl.size());
  return zl;
}

std::string as_string_value(const std::string& blob) {
  std::string out;
  rdb::write_len(out, blob.size());
  return out + blob;
}

}  // namespace

TEST_CASE("ziplist-based encodings of RDB versions before 10") {
  auto decode = [](const std::string& value) {
    DecodedValue v;
    REQUIRE(decode_value(value, v));
    return std::move(v.object);
  };
  const std::string zl = ziplist({"a", "7", "bc"});
  auto list = decode(bytes({rdb::kTypeListZiplist}) + as_string_value(zl));
  CHECK(static_cast<ListObject&>(*list).size() == 3);
  CHECK(static_cast<ListObject&>(*list).at(1) == "7");
  auto quick = decode(bytes({rdb::kTypeListQuicklist, 2}) + as_string_value(zl) +
                      as_string_value(ziplist({"z"})));
  CHECK(static_cast<ListObject&>(*quick).size() == 4);
  CHECK(static_cast<ListObject&>(*quick).at(3) == "z");
  auto zset =
      decode(bytes({rdb::kTypeZSetZiplist}) + as_string_value(ziplist({"m", "3", "n", "1.5"})));
  CHECK(static_cast<ZSetObject&>(*zset).score("m") == 3.0);
  CHECK(static_cast<ZSetObject&>(*zset).score("n") == 1.5);
  CHECK(zset->encoding_name() == "listpack");
  auto hash =
      decode(bytes({rdb::kTypeHashZiplist}) + as_string_value(ziplist({"f", "v", "g", "12"})));
  CHECK(static_cast<HashObject&>(*hash).get("g") == "12");
  CHECK(hash->encoding_name() == "listpack");
  // An odd number of elements in a pair encoding is corrupt.
  DecodedValue v;
  CHECK_FALSE(decode_value(bytes({rdb::kTypeHashZiplist}) + as_string_value(ziplist({"f"})), v));
}

TEST_CASE("mutated and truncated values never read out of bounds") {
  Store a;
  a.set_string("s", std::string(300, 'q') + "tail", Expiry::none());
  {
    auto l = write_object<ListObject>(a, "l", true);
    for (int i = 0; i < 300; ++i) l.value()->push(ListObject::End::kTail, std::to_string(i * 77));
    auto z = write_object<ZSetObject>(a, "z", true);
    for (int i = 0; i < 50; ++i) z.value()->set("m" + std::to_string(i), i * 0.5);
    auto h = write_object<HashObject>(a, "h", true);
    for (int i = 0; i < 50; ++i) h.value()->set("f" + std::to_string(i), std::to_string(-i * 999));
    auto s = write_object<SetObject>(a, "i", true);
    for (int i = 0; i < 50; ++i) s.value()->add(std::to_string(i * 100000));
  }
  uint64_t state = 12345;
  auto next = [&state] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state >> 33;
  };
  size_t decoded = 0;
  for (const char* key : {"s", "l", "z", "h", "i"}) {
    std::string value;
    encode_value(*a.peek(key), value);
    for (int round = 0; round < 3000; ++round) {
      std::string mutated = value;
      const int edits = 1 + static_cast<int>(next() % 4);
      for (int e = 0; e < edits; ++e) mutated[next() % mutated.size()] = static_cast<char>(next());
      if (round % 3 == 0) mutated.resize(next() % mutated.size());
      DecodedValue v;
      if (decode_value(mutated, v)) {
        ++decoded;
        CHECK((v.type == ValueType::kString || v.object->size() > 0));
      }
    }
  }
  MESSAGE("mutations that still decoded: " << decoded);
}
