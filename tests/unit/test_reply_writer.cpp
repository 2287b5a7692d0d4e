// Unit tests for ReplyWriter: every encoding in RESP2 and RESP3, deferred lengths, and doubles
// printed exactly as Redis 7.0.15 prints them (checked against the real server's replies).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "protocol/reply_writer.h"

namespace {

using ringkv::protocol::ReplyWriter;
using ringkv::protocol::RespVersion;

using namespace std::string_literals;

constexpr RespVersion kV2 = RespVersion::kResp2;
constexpr RespVersion kV3 = RespVersion::kResp3;

// Runs `write` against a fresh writer of `version` and returns the bytes it produced.
template <typename Write>
std::string encode(RespVersion version, Write write) {
  std::string out;
  ReplyWriter writer(out, version);
  write(writer);
  return out;
}

}  // namespace

TEST_CASE("simple strings and shared replies") {
  for (RespVersion v : {kV2, kV3}) {
    CHECK(encode(v, [](ReplyWriter& w) { w.simple("OK"); }) == "+OK\r\n");
    CHECK(encode(v, [](ReplyWriter& w) { w.simple(""); }) == "+\r\n");
    CHECK(encode(v, [](ReplyWriter& w) { w.ok(); }) == "+OK\r\n");
    CHECK(encode(v, [](ReplyWriter& w) { w.pong(); }) == "+PONG\r\n");
    CHECK(encode(v, [](ReplyWriter& w) { w.queued(); }) == "+QUEUED\r\n");
  }
}

TEST_CASE("errors carry their code and never break the line") {
  for (RespVersion v : {kV2, kV3}) {
    CHECK(encode(v, [](ReplyWriter& w) { w.error("ERR syntax error"); }) ==
          "-ERR syntax error\r\n");
    CHECK(encode(v, [](ReplyWriter& w) { w.error("ERR bad\r\nthing\n"); }) ==
          "-ERR bad  thing \r\n");
  }
}

TEST_CASE("integers") {
  for (RespVersion v : {kV2, kV3}) {
    CHECK(encode(v, [](ReplyWriter& w) { w.integer(0); }) == ":0\r\n");
    CHECK(encode(v, [](ReplyWriter& w) { w.integer(1); }) == ":1\r\n");
    CHECK(encode(v, [](ReplyWriter& w) { w.integer(-1); }) == ":-1\r\n");
    CHECK(encode(v, [](ReplyWriter& w) { w.integer(1234567); }) == ":1234567\r\n");
    CHECK(encode(v, [](ReplyWriter& w) { w.integer(std::numeric_limits<int64_t>::max()); }) ==
          ":9223372036854775807\r\n");
    CHECK(encode(v, [](ReplyWriter& w) { w.integer(std::numeric_limits<int64_t>::min()); }) ==
          ":-9223372036854775808\r\n");
  }
}

TEST_CASE("bulk strings, including binary and empty") {
  for (RespVersion v : {kV2, kV3}) {
    CHECK(encode(v, [](ReplyWriter& w) { w.bulk("hello"); }) == "$5\r\nhello\r\n");
    CHECK(encode(v, [](ReplyWriter& w) { w.bulk(""); }) == "$0\r\n\r\n");
    CHECK(encode(v, [](ReplyWriter& w) { w.bulk("a\0\r\nb"s); }) == "$5\r\na\0\r\nb\r\n"s);
    CHECK(encode(v, [](ReplyWriter& w) { w.bulk_integer(-42); }) == "$3\r\n-42\r\n");
    CHECK(encode(v, [](ReplyWriter& w) { w.bulk_integer(0); }) == "$1\r\n0\r\n");
    CHECK(encode(v, [](ReplyWriter& w) { w.bulk_integer(std::numeric_limits<int64_t>::min()); }) ==
          "$20\r\n-9223372036854775808\r\n");
  }
}

TEST_CASE("nulls differ between RESP2 and RESP3") {
  CHECK(encode(kV2, [](ReplyWriter& w) { w.null(); }) == "$-1\r\n");
  CHECK(encode(kV2, [](ReplyWriter& w) { w.null_array(); }) == "*-1\r\n");
  CHECK(encode(kV3, [](ReplyWriter& w) { w.null(); }) == "_\r\n");
  CHECK(encode(kV3, [](ReplyWriter& w) { w.null_array(); }) == "_\r\n");
}

TEST_CASE("aggregate headers") {
  CHECK(encode(kV2, [](ReplyWriter& w) { w.array(3); }) == "*3\r\n");
  CHECK(encode(kV3, [](ReplyWriter& w) { w.array(0); }) == "*0\r\n");
  CHECK(encode(kV2, [](ReplyWriter& w) { w.map(2); }) == "*4\r\n");
  CHECK(encode(kV3, [](ReplyWriter& w) { w.map(2); }) == "%2\r\n");
  CHECK(encode(kV2, [](ReplyWriter& w) { w.set(5); }) == "*5\r\n");
  CHECK(encode(kV3, [](ReplyWriter& w) { w.set(5); }) == "~5\r\n");
  CHECK(encode(kV2, [](ReplyWriter& w) { w.push(3); }) == "*3\r\n");
  CHECK(encode(kV3, [](ReplyWriter& w) { w.push(3); }) == ">3\r\n");
}

TEST_CASE("booleans") {
  CHECK(encode(kV2, [](ReplyWriter& w) { w.boolean(true); }) == ":1\r\n");
  CHECK(encode(kV2, [](ReplyWriter& w) { w.boolean(false); }) == ":0\r\n");
  CHECK(encode(kV3, [](ReplyWriter& w) { w.boolean(true); }) == "#t\r\n");
  CHECK(encode(kV3, [](ReplyWriter& w) { w.boolean(false); }) == "#f\r\n");
}

TEST_CASE("verbatim strings pad or cut the format to three bytes") {
  CHECK(encode(kV2, [](ReplyWriter& w) { w.verbatim("# Server"); }) == "$8\r\n# Server\r\n");
  CHECK(encode(kV3, [](ReplyWriter& w) { w.verbatim("# Server"); }) == "=12\r\ntxt:# Server\r\n");
  CHECK(encode(kV3, [](ReplyWriter& w) { w.verbatim("x", "markdown"); }) == "=5\r\nmar:x\r\n");
  CHECK(encode(kV3, [](ReplyWriter& w) { w.verbatim("x", "a"); }) == "=5\r\na  :x\r\n");
  CHECK(encode(kV3, [](ReplyWriter& w) { w.verbatim(""); }) == "=4\r\ntxt:\r\n");
}

TEST_CASE("doubles match redis-server 7.0.15 ZSCORE replies") {
  // Expected texts captured from ZSCORE on the real server (RESP2 bulk, RESP3 ',').
  const std::pair<double, std::string> cases[] = {
      {1.1, "1.1000000000000001"},
      {3.0, "3"},
      {1.5, "1.5"},
      {0.0, "0"},
      {0.1, "0.10000000000000001"},
      {1e300, "1.0000000000000001e+300"},
      {2.5e-5, "2.5000000000000001e-05"},
      {123456789012345678.0, "1.2345678901234568e+17"},
      {std::numeric_limits<double>::infinity(), "inf"},
      {-std::numeric_limits<double>::infinity(), "-inf"},
      {-0.0, "-0"},
      {-2.5, "-2.5"},
  };
  for (const auto& entry : cases) {
    const double value = entry.first;
    const std::string& text = entry.second;
    CAPTURE(text);
    CHECK(encode(kV2, [&](ReplyWriter& w) { w.double_value(value); }) ==
          "$" + std::to_string(text.size()) + "\r\n" + text + "\r\n");
    CHECK(encode(kV3, [&](ReplyWriter& w) { w.double_value(value); }) == "," + text + "\r\n");
  }
  CHECK(encode(kV3, [](ReplyWriter& w) { w.double_value(std::nan("")); }) == ",nan\r\n");
}

TEST_CASE("doubles print as printf's %.17g for arbitrary bit patterns") {
  std::mt19937_64 rng(20240601);
  for (int i = 0; i < 20000; ++i) {
    const uint64_t bits = rng();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    if (std::isinf(d) || std::isnan(d)) continue;
    char expected[64];
    std::snprintf(expected, sizeof expected, "%.17g", d);
    CAPTURE(expected);
    REQUIRE(encode(kV3, [&](ReplyWriter& w) { w.double_value(d); }) ==
            "," + std::string(expected) + "\r\n");
  }
}

TEST_CASE("deferred lengths are filled in place") {
  for (RespVersion v : {kV2, kV3}) {
    std::string out = "+before\r\n";
    ReplyWriter w(out, v);
    const size_t token = w.begin_deferred();
    for (int i = 0; i < 12; ++i) w.integer(i);
    w.end_deferred_array(token, 12);
    w.ok();
    std::string expected = "+before\r\n*12\r\n";
    for (int i = 0; i < 12; ++i) expected += ":" + std::to_string(i) + "\r\n";
    expected += "+OK\r\n";
    CHECK(out == expected);
  }

  CHECK(encode(kV2, [](ReplyWriter& w) {
          const size_t token = w.begin_deferred();
          w.bulk("k");
          w.bulk("v");
          w.end_deferred_map(token, 1);
        }) == "*2\r\n$1\r\nk\r\n$1\r\nv\r\n");
  CHECK(encode(kV3, [](ReplyWriter& w) {
          const size_t token = w.begin_deferred();
          w.bulk("k");
          w.bulk("v");
          w.end_deferred_map(token, 1);
        }) == "%1\r\n$1\r\nk\r\n$1\r\nv\r\n");
  CHECK(encode(kV2, [](ReplyWriter& w) {
          const size_t token = w.begin_deferred();
          w.end_deferred_set(token, 0);
        }) == "*0\r\n");
  CHECK(encode(kV3, [](ReplyWriter& w) {
          const size_t token = w.begin_deferred();
          w.bulk("m");
          w.end_deferred_set(token, 1);
        }) == "~1\r\n$1\r\nm\r\n");
}

TEST_CASE("nested deferred lengths end innermost first") {
  const std::string out = encode(kV3, [](ReplyWriter& w) {
    const size_t outer = w.begin_deferred();
    for (int i = 0; i < 2; ++i) {
      const size_t inner = w.begin_deferred();
      w.bulk("x");
      w.double_value(1.5);
      w.end_deferred_array(inner, 2);
    }
    w.end_deferred_array(outer, 2);
  });
  CHECK(out == "*2\r\n*2\r\n$1\r\nx\r\n,1.5\r\n*2\r\n$1\r\nx\r\n,1.5\r\n");
}

TEST_CASE("raw bytes pass through and writers append to existing output") {
  std::string out = "*2\r\n";
  ReplyWriter w(out);
  w.raw("$1\r\na\r\n");
  w.null();
  CHECK(out == "*2\r\n$1\r\na\r\n$-1\r\n");
  CHECK(w.version() == kV2);
  w.set_version(kV3);
  w.null();
  CHECK(out == "*2\r\n$1\r\na\r\n$-1\r\n_\r\n");
  CHECK(&w.buffer() == &out);
}
