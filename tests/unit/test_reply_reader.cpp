// Unit tests for the peer reply scanner and decoder.
#include <doctest/doctest.h>

#include <string>

#include "protocol/reply_reader.h"

using ringkv::protocol::decode_reply;
using ringkv::protocol::ReplyScanner;
using ringkv::protocol::ReplyValue;

namespace {

// Feeds `bytes` one more byte at a time; the scan must stay incomplete until the full value.
void check_every_prefix(const std::string& bytes, size_t value_len) {
  ReplyScanner s;
  for (size_t n = 0; n < value_len; ++n) {
    auto r = s.scan({bytes.data(), n});
    REQUIRE(r.status == ReplyScanner::Status::kIncomplete);
  }
  auto r = s.scan({bytes.data(), bytes.size()});
  REQUIRE(r.status == ReplyScanner::Status::kComplete);
  CHECK(r.length == value_len);
}

}  // namespace

TEST_CASE("scanner frames simple, bulk, null and nested values at every split point") {
  for (std::string v :
       {"+OK\r\n", "-ERR no\r\n", ":42\r\n", "$3\r\nfoo\r\n", "$-1\r\n", "*-1\r\n", "*0\r\n",
        "*2\r\n$1\r\na\r\n$-1\r\n", "*2\r\n*1\r\n:1\r\n*0\r\n", "%1\r\n+a\r\n:1\r\n", "_\r\n",
        ",1.5\r\n", "#t\r\n", "~2\r\n+a\r\n+b\r\n", "=7\r\ntxt:abc\r\n",
        "*3\r\n*2\r\n$1\r\nx\r\n:2\r\n$0\r\n\r\n*1\r\n*1\r\n*1\r\n+deep\r\n"}) {
    CAPTURE(v);
    check_every_prefix(v + "+NEXT\r\n", v.size());
  }
}

TEST_CASE("scanner resumes after each complete value") {
  std::string in = ":1\r\n$2\r\nab\r\n";
  ReplyScanner s;
  auto r = s.scan({in.data(), in.size()});
  REQUIRE(r.status == ReplyScanner::Status::kComplete);
  CHECK(r.length == 4);
  r = s.scan({in.data() + 4, in.size() - 4});
  REQUIRE(r.status == ReplyScanner::Status::kComplete);
  CHECK(r.length == 8);
}

TEST_CASE("scanner rejects malformed replies") {
  for (std::string v : {"?x\r\n", "$abc\r\n", "*-5\r\n", ":1\rX"}) {
    CAPTURE(v);
    ReplyScanner s;
    CHECK(s.scan({v.data(), v.size()}).status == ReplyScanner::Status::kError);
  }
}

TEST_CASE("decode builds the tree of a nested reply") {
  ReplyValue v;
  REQUIRE(decode_reply("*3\r\n$1\r\na\r\n$-1\r\n:7\r\n", v));
  CHECK(v.type == '*');
  REQUIRE(v.elements.size() == 3);
  CHECK(v.elements[0].text == "a");
  CHECK(v.elements[1].null);
  CHECK(v.elements[2].integer == 7);
  REQUIRE(decode_reply("%1\r\n+k\r\n*1\r\n+v\r\n", v));
  CHECK(v.elements.size() == 2);
  CHECK(v.elements[1].elements[0].text == "v");
  CHECK_FALSE(decode_reply("*2\r\n:1\r\n", v));
  CHECK_FALSE(decode_reply(":1\r\n:2\r\n", v));
}

TEST_CASE("enormous declared aggregate lengths neither overflow nor allocate") {
  // A map's count doubles into keys plus values: a count whose double does not fit is malformed.
  for (std::string v : {"%9223372036854775807\r\n", "|4611686018427387904\r\n"}) {
    CAPTURE(v);
    ReplyScanner s;
    CHECK(s.scan({v.data(), v.size()}).status == ReplyScanner::Status::kError);
  }
  // A header that announces more elements than the bytes could hold fails to decode instead of
  // reserving room for them first.
  ReplyValue v;
  CHECK_FALSE(decode_reply("*9223372036854775807\r\n", v));
  CHECK_FALSE(decode_reply("*1000000000000\r\n:1\r\n", v));
  CHECK_FALSE(decode_reply("%4611686018427387904\r\n", v));
  CHECK_FALSE(decode_reply("*2\r\n:1\r\n", v));
  REQUIRE(decode_reply("*2\r\n+\r\n_\r\n", v));
  CHECK(v.elements.size() == 2);
}
