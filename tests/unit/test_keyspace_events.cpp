// Unit tests for notify-keyspace-events parsing and its canonical form, as Redis 7.0.15 answers
// CONFIG SET / CONFIG GET (checked against redis-server by test_notifications.py too).
#include <doctest/doctest.h>

#include <string>

#include "common/keyspace_events.h"

using namespace ringkv::common;

namespace {

std::string canonical(std::string_view text) {
  const auto flags = parse_keyspace_events(text);
  REQUIRE(flags.has_value());
  return format_keyspace_events(*flags);
}

}  // namespace

TEST_CASE("every class character parses to its bit") {
  CHECK(parse_keyspace_events("") == 0);
  CHECK(parse_keyspace_events("K") == kNotifyKeyspace);
  CHECK(parse_keyspace_events("E") == kNotifyKeyevent);
  CHECK(parse_keyspace_events("g$lshz") ==
        (kNotifyGeneric | kNotifyString | kNotifyList | kNotifySet | kNotifyHash | kNotifyZset));
  CHECK(parse_keyspace_events("xetmdn") == (kNotifyExpired | kNotifyEvicted | kNotifyStream |
                                            kNotifyKeyMiss | kNotifyModule | kNotifyNew));
  CHECK(parse_keyspace_events("A") == kNotifyAll);
}

TEST_CASE("an unknown character rejects the whole value") {
  CHECK_FALSE(parse_keyspace_events("KEx?").has_value());
  CHECK_FALSE(parse_keyspace_events("a").has_value());
  CHECK_FALSE(parse_keyspace_events(" ").has_value());
}

TEST_CASE("the canonical form is Redis's") {
  CHECK(canonical("KEA") == "AKE");
  CHECK(canonical("AKEn") == "AKE");  // 'n' is outside A and not printed with it, as in 7.0
  CHECK(canonical("Kn") == "nK");
  CHECK(canonical("gxE") == "gxE");
  CHECK(canonical("KEAm") == "AKEm");
  CHECK(canonical("Eg$lshzxetdn") == "AE");
  CHECK(canonical("EKzl") == "lzKE");
  CHECK(canonical("") == "");
}
