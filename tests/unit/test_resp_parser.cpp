// Unit tests for RespParser: every split point, pipelining, limits, Redis 7.0's exact error texts
// and its quirks (NUL bytes hiding line ends, unchecked CRLF bytes, sdssplitargs quoting).
#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

#include "protocol/errors.h"
#include "protocol/request_writer.h"
#include "protocol/resp_parser.h"

namespace {

using ringkv::protocol::ParseLimits;
using ringkv::protocol::ParseResult;
using ringkv::protocol::ParseStatus;
using ringkv::protocol::RespParser;
using namespace std::string_literals;

using Argv = std::vector<std::string>;

std::span<const char> bytes(const std::string& s) { return {s.data(), s.size()}; }

Argv to_strings(const std::vector<std::string_view>& argv) { return {argv.begin(), argv.end()}; }

// Parses `request` whole with a fresh parser; expects it to complete using all its bytes.
Argv parse_whole(const std::string& request) {
  RespParser parser;
  std::vector<std::string_view> argv;
  ParseResult r = parser.parse(bytes(request), argv);
  REQUIRE(r.status == ParseStatus::kComplete);
  CHECK(r.consumed == request.size());
  return to_strings(argv);
}

// Parses `request` with a fresh parser and returns the error text (empty if no error).
std::string parse_error(const std::string& request, ParseLimits limits = {}) {
  RespParser parser(limits);
  std::vector<std::string_view> argv;
  ParseResult r = parser.parse(bytes(request), argv);
  return r.status == ParseStatus::kError ? std::string(r.error) : std::string();
}

ParseStatus parse_status(const std::string& request, ParseLimits limits = {}) {
  RespParser parser(limits);
  std::vector<std::string_view> argv;
  return parser.parse(bytes(request), argv).status;
}

// Feeds every prefix of `request` (each in a freshly allocated buffer, so the bytes move between
// calls) and checks Incomplete for all of them, then Complete with `expected` on the whole.
void check_every_split(const std::string& request, const Argv& expected) {
  CAPTURE(request);
  RespParser incremental;
  std::vector<std::string_view> argv;
  for (size_t k = 0; k < request.size(); ++k) {
    CAPTURE(k);
    const std::string prefix = request.substr(0, k);
    ParseResult r = incremental.parse(bytes(prefix), argv);
    REQUIRE(r.status == ParseStatus::kIncomplete);
    CHECK(r.consumed == 0);
    CHECK(argv.empty());

    // The same split seen by a parser that starts at that point.
    RespParser once;
    REQUIRE(once.parse(bytes(prefix), argv).status == ParseStatus::kIncomplete);
    const std::string whole = request;
    ParseResult done = once.parse(bytes(whole), argv);
    REQUIRE(done.status == ParseStatus::kComplete);
    CHECK(done.consumed == request.size());
    CHECK(to_strings(argv) == expected);
  }
  const std::string whole = request;
  ParseResult r = incremental.parse(bytes(whole), argv);
  REQUIRE(r.status == ParseStatus::kComplete);
  CHECK(r.consumed == request.size());
  CHECK(to_strings(argv) == expected);
}

}  // namespace

TEST_CASE("multibulk requests complete at the last byte, from every split point") {
  check_every_split("*1\r\n$4\r\nPING\r\n", {"PING"});
  check_every_split("*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n", {"SET", "key", "value"});
  check_every_split("*2\r\n$4\r\nECHO\r\n$0\r\n\r\n", {"ECHO", ""});
  check_every_split("*2\r\n$3\r\nGET\r\n$5\r\na\r\nb\0\r\n"s, {"GET", "a\r\nb\0"s});
  check_every_split("*0\r\n", {});
  check_every_split("*-1\r\n", {});
  check_every_split("*1\r\n$12\r\n" + std::string(12, 'x') + "\r\n", {std::string(12, 'x')});
}

TEST_CASE("inline requests complete at the newline, from every split point") {
  check_every_split("PING\r\n", {"PING"});
  check_every_split("PING\n", {"PING"});
  check_every_split("SET k \"v w\"\r\n", {"SET", "k", "v w"});
  check_every_split("  GET   key  \r\n", {"GET", "key"});
  check_every_split("\r\n", {});
  check_every_split("\n", {});
}

TEST_CASE("pipelined requests parse back to back") {
  const std::string pipeline =
      "*1\r\n$4\r\nPING\r\nECHO hi\r\n*0\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n\n*1\r\n$4\r\nP";
  const std::vector<Argv> expected = {{"PING"}, {"ECHO", "hi"}, {}, {"GET", "k"}, {}};
  RespParser parser;
  std::vector<std::string_view> argv;
  size_t offset = 0;
  for (const Argv& want : expected) {
    ParseResult r = parser.parse(std::span(pipeline).subspan(offset), argv);
    REQUIRE(r.status == ParseStatus::kComplete);
    CHECK(to_strings(argv) == want);
    offset += r.consumed;
  }
  ParseResult last = parser.parse(std::span(pipeline).subspan(offset), argv);
  CHECK(last.status == ParseStatus::kIncomplete);
  CHECK(last.consumed == 0);
  CHECK(pipeline.size() - offset == 9);
}

TEST_CASE("append_request writes what the parser reads back, after what the buffer held") {
  const std::string big(100000, 'v');
  const std::vector<std::string_view> argv = {"SET", "", big, "x\r\n$1"};
  std::string out = "+kept\r\n";
  ringkv::protocol::append_request(out, argv);
  CHECK(out.starts_with("+kept\r\n*4\r\n$3\r\nSET\r\n$0\r\n\r\n$100000\r\n"));
  CHECK(out.ends_with("\r\n$5\r\nx\r\n$1\r\n"));
  CHECK(out.size() == 7 + 4 + 9 + 6 + (9 + 100000 + 2) + 11);
  CHECK(parse_whole(out.substr(7)) == Argv{"SET", "", big, "x\r\n$1"});
  std::string empty;
  ringkv::protocol::append_request(empty, {});
  CHECK(empty == "*0\r\n");
}

TEST_CASE("scan_plain_request reads each whole plain request as the parser does") {
  using ringkv::protocol::scan_plain_request;
  const std::string pipeline =
      "*3\r\n$3\r\nSET\r\n$2\r\nk1\r\n$1\r\nv\r\n*1\r\n$4\r\nPING\r\n"
      "*5\r\n$4\r\nSADD\r\n$1\r\ns\r\n$2\r\nm1\r\n$2\r\nm2\r\n$2\r\nm3\r\n"
      "*2\r\n$3\r\nGET\r\n$0\r\n\r\n*2\r\n$3\r\nGET\r\n$2\r\nk";
  // It agrees with the incremental parser alone (an unauthenticated client's never takes the
  // fast path) on every complete request, and stops at the incomplete one.
  RespParser parser;
  parser.set_unauthenticated(true);
  std::vector<std::string_view> argv;
  size_t offset = 0;
  std::vector<std::string> seen;
  for (;;) {
    std::vector<std::string_view> scanned = {"before"};
    const size_t len = scan_plain_request(std::span(pipeline).subspan(offset), {}, scanned);
    ParseResult r = parser.parse(std::span(pipeline).subspan(offset), argv);
    if (len == 0) {
      CHECK(r.status == ParseStatus::kIncomplete);
      CHECK(scanned == std::vector<std::string_view>{"before"});
      break;
    }
    REQUIRE(r.status == ParseStatus::kComplete);
    CHECK(len == r.consumed);
    REQUIRE(scanned.size() == argv.size() + 1);
    CHECK(std::equal(argv.begin(), argv.end(), scanned.begin() + 1));
    seen.push_back(std::string(argv[0]) + "|" + std::to_string(argv.size()));
    offset += len;
  }
  CHECK(seen == std::vector<std::string>{"SET|3", "PING|1", "SADD|5", "GET|2"});
  // What it leaves to the parser: inline, empty, negative, malformed, long or over-limit
  // requests, numbers with a leading zero or over 9 digits, and every cut of a complete request.
  ParseLimits small;
  small.max_bulk_len = 3;
  small.max_multibulk_len = 2;
  for (const std::string& in :
       {"PING\r\n"s, "*0\r\n"s, "*-1\r\n"s, "*1\r\n$x\r\n"s, "*1\r\n$-1\r\n"s,
        "*99999999999999999999\r\n"s, "$3\r\nGET\r\n"s, "*01\r\n$1\r\na\r\n"s,
        "*1\r\n$01\r\na\r\n"s, "*1\r\n$0000000001\r\na\r\n"s, "*1\r\n$1 \r\na\r\n"s,
        "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n"s, "*1\r\n$4\r\nabcd\r\n"s}) {
    std::vector<std::string_view> scanned;
    CHECK_MESSAGE(scan_plain_request(bytes(in), small, scanned) == 0, in);
    CHECK(scanned.empty());
  }
  // Within the limits, the byte after each '\r' and the two after each bulk are not looked at,
  // as Redis skips them.
  const std::string loose = "*2\rx$1\ryaXY$3\r\nabc\r\n";
  std::vector<std::string_view> scanned;
  CHECK(scan_plain_request(bytes(loose), small, scanned) == loose.size());
  CHECK(scanned == std::vector<std::string_view>{"a", "abc"});
  RespParser incremental(small);
  incremental.set_unauthenticated(true);
  std::vector<std::string_view> incremental_argv;
  CHECK(incremental.parse(bytes(loose), incremental_argv).consumed == loose.size());
  CHECK(incremental_argv == scanned);
  const std::string one = "*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n";
  for (size_t cut = 0; cut < one.size(); ++cut) {
    std::vector<std::string_view> none;
    CHECK(scan_plain_request(std::span(one).first(cut), {}, none) == 0);
  }
}

TEST_CASE("arguments are views into the caller's buffer") {
  const std::string request = "*2\r\n$3\r\nGET\r\n$3\r\nkey\r\nGET unquoted\r\n";
  RespParser parser;
  std::vector<std::string_view> argv;
  ParseResult r = parser.parse(bytes(request), argv);
  REQUIRE(r.status == ParseStatus::kComplete);
  CHECK(argv[1].data() == request.data() + 17);
  r = parser.parse(std::span(request).subspan(r.consumed), argv);
  REQUIRE(r.status == ParseStatus::kComplete);
  CHECK(argv[1].data() == request.data() + 26);
}

TEST_CASE("numbers follow Redis's string2ll") {
  const std::string bad_count(ringkv::protocol::err::kProtoInvalidMultibulk);
  CHECK(parse_error("*+1\r\n$4\r\nPING\r\n") == bad_count);
  CHECK(parse_error("*01\r\n$4\r\nPING\r\n") == bad_count);
  CHECK(parse_error("*-0\r\n") == bad_count);
  CHECK(parse_error("*\r\n") == bad_count);
  CHECK(parse_error("*1 \r\n") == bad_count);
  CHECK(parse_error("*-\r\n") == bad_count);
  CHECK(parse_error("*99999999999999999999\r\n") == bad_count);
  CHECK(parse_error("*-9223372036854775809\r\n") == bad_count);
  CHECK(parse_whole("*-9223372036854775808\r\n").empty());
  CHECK(parse_whole("*-5\r\n").empty());
  // Around the lengths of 1 to 9 digits read at once.
  CHECK(parse_error("*1/\r\n") == bad_count);
  CHECK(parse_error("*1:\r\n") == bad_count);
  CHECK(parse_error("*12345678x\r\n") == bad_count);
  CHECK(parse_status("*999999999\r\n") == ParseStatus::kIncomplete);
  CHECK(parse_status("*1000000000\r\n") == ParseStatus::kIncomplete);

  const std::string bad_bulk(ringkv::protocol::err::kProtoInvalidBulk);
  CHECK(parse_error("*1\r\n$-1\r\n") == bad_bulk);
  CHECK(parse_error("*1\r\n$-0\r\n") == bad_bulk);
  CHECK(parse_error("*1\r\n$00\r\n") == bad_bulk);
  CHECK(parse_error("*1\r\n$+4\r\nPING\r\n") == bad_bulk);
  CHECK(parse_error("*1\r\n$\r\n") == bad_bulk);
  CHECK(parse_error("*1\r\n$4 \r\nPING\r\n") == bad_bulk);
  CHECK(parse_error("*1\r\n$x\r\n") == bad_bulk);
  CHECK(parse_whole("*1\r\n$0\r\n\r\n") == Argv{""});
  CHECK(parse_whole("*1\r\n$10\r\n0123456789\r\n") == Argv{"0123456789"});
  CHECK(parse_error("*1\r\n$1/\r\n") == bad_bulk);
}

TEST_CASE("multibulk count limit is INT_MAX by default, and configurable") {
  CHECK(parse_error("*2147483648\r\n") == ringkv::protocol::err::kProtoInvalidMultibulk);
  CHECK(parse_status("*2147483647\r\n") == ParseStatus::kIncomplete);
  ParseLimits small;
  small.max_multibulk_len = 3;
  CHECK(parse_status("*3\r\n", small) == ParseStatus::kIncomplete);
  CHECK(parse_error("*4\r\n", small) == ringkv::protocol::err::kProtoInvalidMultibulk);
}

TEST_CASE("bulk length limit is proto-max-bulk-len, inclusive") {
  CHECK(parse_status("*1\r\n$536870912\r\n") == ParseStatus::kIncomplete);
  CHECK(parse_error("*1\r\n$536870913\r\n") == ringkv::protocol::err::kProtoInvalidBulk);
  ParseLimits small;
  small.max_bulk_len = 5;
  CHECK(parse_status("*1\r\n$5\r\n", small) == ParseStatus::kIncomplete);
  CHECK(parse_error("*1\r\n$6\r\n", small) == ringkv::protocol::err::kProtoInvalidBulk);
}

TEST_CASE("huge declared lengths wait for data without allocating for it") {
  RespParser parser;
  std::vector<std::string_view> argv;
  const std::string huge = "*2000000000\r\n$536870912\r\nabc";
  ParseResult r = parser.parse(bytes(huge), argv);
  CHECK(r.status == ParseStatus::kIncomplete);
  CHECK(parser.pending_bulk_hint() == 536870912 + 2 - 3);
  CHECK(parse_error("*2000000000\r\n$4000000000\r\n") == ringkv::protocol::err::kProtoInvalidBulk);
  CHECK(parse_error("*1\r\n$99999999999999999999999\r\n") ==
        ringkv::protocol::err::kProtoInvalidBulk);
}

TEST_CASE("pending bulk hint counts the bytes still missing") {
  RespParser parser;
  std::vector<std::string_view> argv;
  const std::string partial = "*2\r\n$1\r\na\r\n$100\r\n0123456789";
  CHECK(parser.parse(bytes(partial), argv).status == ParseStatus::kIncomplete);
  CHECK(parser.pending_bulk_hint() == 92);
  const std::string header_only = "*2\r\n$1\r\na\r\n$10";
  RespParser fresh;
  CHECK(fresh.parse(bytes(header_only), argv).status == ParseStatus::kIncomplete);
  CHECK(fresh.pending_bulk_hint() == 0);
}

TEST_CASE("expected '$' error names the offending byte, CR and LF blanked") {
  CHECK(parse_error("*1\r\nX\r\n") == "ERR Protocol error: expected '$', got 'X'");
  CHECK(parse_error("*1\r\n\r\n") == "ERR Protocol error: expected '$', got ' '");
  CHECK(parse_error("*1\r\n\n\r\n") == "ERR Protocol error: expected '$', got ' '");
  CHECK(parse_error("*1\r\n\x80\r\n") == "ERR Protocol error: expected '$', got '\x80'");
  CHECK(parse_error("*2\r\n$1\r\na\r\n:1\r\n") == "ERR Protocol error: expected '$', got ':'");
}

TEST_CASE("lines without CR beyond 64KB are rejected, at the same byte as Redis") {
  const std::string ones(65535, '1');
  CHECK(parse_status("*" + ones) == ParseStatus::kIncomplete);
  CHECK(parse_error("*" + ones + "1") == ringkv::protocol::err::kProtoBigMultibulkCount);
  CHECK(parse_status("*1\r\n$" + ones) == ParseStatus::kIncomplete);
  CHECK(parse_error("*1\r\n$" + ones + "1") == ringkv::protocol::err::kProtoBigBulkCount);
  CHECK(parse_status(std::string(65536, 'P')) == ParseStatus::kIncomplete);
  CHECK(parse_error(std::string(65537, 'P')) == ringkv::protocol::err::kProtoBigInline);

  ParseLimits small;
  small.max_inline_len = 8;
  CHECK(parse_status("GET 1234", small) == ParseStatus::kIncomplete);
  CHECK(parse_error("GET 12345", small) == ringkv::protocol::err::kProtoBigInline);
  // The limit is on the unterminated line, not on a line that has its newline.
  CHECK(parse_status("GET 123456789\r\n", small) == ParseStatus::kComplete);
}

TEST_CASE("limit errors also trigger after a request grew past the limit incrementally") {
  RespParser parser;
  std::vector<std::string_view> argv;
  std::string buffer = "*1\r\n$";
  CHECK(parser.parse(bytes(buffer), argv).status == ParseStatus::kIncomplete);
  buffer += std::string(40000, '1');
  CHECK(parser.parse(bytes(buffer), argv).status == ParseStatus::kIncomplete);
  buffer += std::string(40000, '1');
  ParseResult r = parser.parse(bytes(buffer), argv);
  CHECK(r.status == ParseStatus::kError);
  CHECK(r.error == ringkv::protocol::err::kProtoBigBulkCount);
}

TEST_CASE("a NUL before the line end hides it, as Redis's strchr does") {
  CHECK(parse_status("*1\0\r\n$4\r\nPING\r\n"s) == ParseStatus::kIncomplete);
  CHECK(parse_status("*1\r\n$4\0\r\nPING\r\n"s) == ParseStatus::kIncomplete);
  CHECK(parse_status("*1\r\n\0\r\n"s) == ParseStatus::kIncomplete);
  CHECK(parse_status("PI\0NG\r\n"s) == ParseStatus::kIncomplete);
  CHECK(parse_status("\0"s) == ParseStatus::kIncomplete);
  // Only the size limit ends such a request.
  CHECK(parse_error("PING\0"s + std::string(70000, 'x') + "\r\n") ==
        ringkv::protocol::err::kProtoBigInline);
  CHECK(parse_error("*1\0\r\n"s + std::string(70000, 'x')) ==
        ringkv::protocol::err::kProtoBigMultibulkCount);
  CHECK(parse_error("*1\r\n$1\0\r"s + std::string(70000, 'x')) ==
        ringkv::protocol::err::kProtoBigBulkCount);

  // A NUL after the CR does not matter; inside bulk data it is ordinary.
  CHECK(parse_whole("*1\r\n$1\r\n\0\r\n"s) == Argv{"\0"s});
}

TEST_CASE("the byte after a header's CR and the two after a bulk are not checked") {
  CHECK(parse_whole("*1\rX$4\rYPINGxy") == Argv{"PING"});
  RespParser parser;
  std::vector<std::string_view> argv;
  // With the CR as the last byte Redis waits for one more byte, whatever it is.
  const std::string ends_in_cr = "*1\r";
  CHECK(parser.parse(bytes(ends_in_cr), argv).status == ParseStatus::kIncomplete);
}

TEST_CASE("inline requests split like sdssplitargs") {
  CHECK(parse_whole("ECHO \"a\\x41\\n\" \r\n") == Argv{"ECHO", "aA\n"});
  CHECK(parse_whole("ECHO \"\\x4g\"\r\n") == Argv{"ECHO", "x4g"});
  CHECK(parse_whole("ECHO \"\\n\\r\\t\\b\\a\\\\\\\"\\q\"\n") == Argv{"ECHO", "\n\r\t\b\a\\\"q"});
  CHECK(parse_whole("ECHO 'a\\'b'\r\n") == Argv{"ECHO", "a'b"});
  CHECK(parse_whole("ECHO 'a\\nb\"'\r\n") == Argv{"ECHO", "a\\nb\""});
  CHECK(parse_whole("ECHO a\"b c\"\r\n") == Argv{"ECHO", "ab c"});
  CHECK(parse_whole("ECHO \"\"\r\n") == Argv{"ECHO", ""});
  CHECK(parse_whole("ECHO \"a\"\t'b'\r\n") == Argv{"ECHO", "a", "b"});
  CHECK(parse_whole("ECHO \"a\"\v\r\n") == Argv{"ECHO", "a"});
  CHECK(parse_whole("\x0bPING\r\n") == Argv{"PING"});
  CHECK(parse_whole("ECHO a\x0b"
                    "b\r\n") == Argv{"ECHO",
                                     "a\x0b"
                                     "b"});
  CHECK(parse_whole("PING\r\r\n") == Argv{"PING"});
  CHECK(parse_whole("GET \xff\xfe\r\n") == Argv{"GET", "\xff\xfe"});

  const std::string unbalanced(ringkv::protocol::err::kProtoUnbalancedQuotes);
  CHECK(parse_error("ECHO \"ab\"c\r\n") == unbalanced);
  CHECK(parse_error("ECHO 'ab'c\r\n") == unbalanced);
  CHECK(parse_error("ECHO \"ab\r\n") == unbalanced);
  CHECK(parse_error("ECHO 'ab\r\n") == unbalanced);
  CHECK(parse_error("ECHO \"ab\\\"\r\n") == unbalanced);
  CHECK(parse_error("ECHO \"a\"'b'\r\n") == unbalanced);
}

TEST_CASE("many inline arguments with quotes stay valid together") {
  std::string request = "MSET";
  Argv expected = {"MSET"};
  for (int i = 0; i < 200; ++i) {
    const std::string value = "value with spaces " + std::to_string(i);
    request += " k" + std::to_string(i) + " \"" + value + "\"";
    expected.push_back("k" + std::to_string(i));
    expected.push_back(value);
  }
  request += "\r\n";
  CHECK(parse_whole(request) == expected);
}

TEST_CASE("a byte-at-a-time feed of a large request completes once") {
  std::string request =
      "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$20000\r\n" + std::string(20000, 'v') + "\r\n";
  RespParser parser;
  std::vector<std::string_view> argv;
  std::string buffer;
  size_t completions = 0;
  for (char c : request) {
    buffer.push_back(c);
    ParseResult r = parser.parse(bytes(buffer), argv);
    if (r.status == ParseStatus::kComplete) {
      ++completions;
      CHECK(r.consumed == request.size());
    } else {
      REQUIRE(r.status == ParseStatus::kIncomplete);
    }
  }
  CHECK(completions == 1);
  CHECK(argv.size() == 3);
  CHECK(argv[2] == std::string(20000, 'v'));
}

TEST_CASE("the parser is reusable after an error and after reset") {
  RespParser parser;
  std::vector<std::string_view> argv;
  const std::string bad = "*1\r\n$x\r\n";
  CHECK(parser.parse(bytes(bad), argv).status == ParseStatus::kError);
  const std::string good = "*1\r\n$4\r\nPING\r\n";
  CHECK(parser.parse(bytes(good), argv).status == ParseStatus::kComplete);

  const std::string partial = "*2\r\n$3\r\nGET\r\n";
  CHECK(parser.parse(bytes(partial), argv).status == ParseStatus::kIncomplete);
  parser.reset();
  const std::string other = "ECHO x\n";
  ParseResult r = parser.parse(bytes(other), argv);
  REQUIRE(r.status == ParseStatus::kComplete);
  CHECK(to_strings(argv) == Argv{"ECHO", "x"});
}

TEST_CASE("empty input is incomplete") {
  RespParser parser;
  std::vector<std::string_view> argv;
  ParseResult r = parser.parse({}, argv);
  CHECK(r.status == ParseStatus::kIncomplete);
  CHECK(r.consumed == 0);
}
