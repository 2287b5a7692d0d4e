// Secrets: constant-time equality through digests, and HMAC-SHA256 against RFC 4231's vectors.
#include <doctest/doctest.h>

#include <string>

#include "common/secret.h"

using ringkv::common::hmac_sha256_hex;
using ringkv::common::secret_equals;

TEST_CASE("secret_equals compares whole secrets") {
  CHECK(secret_equals("s3cret", "s3cret"));
  CHECK(secret_equals("", ""));
  CHECK_FALSE(secret_equals("s3cret", "s3cre"));
  CHECK_FALSE(secret_equals("s3cre", "s3cret"));
  CHECK_FALSE(secret_equals("s3creT", "s3cret"));
  CHECK_FALSE(secret_equals("", "x"));
  CHECK(secret_equals(std::string("a\0b", 3), std::string("a\0b", 3)));
  CHECK_FALSE(secret_equals(std::string("a\0b", 3), std::string("a\0c", 3)));
}

TEST_CASE("hmac_sha256_hex matches RFC 4231") {
  // Test case 2.
  CHECK(hmac_sha256_hex("Jefe", "what do ya want for nothing?") ==
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  // Test case 1: key 0x0b * 20, "Hi There".
  CHECK(hmac_sha256_hex(std::string(20, '\x0b'), "Hi There") ==
        "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
}

TEST_CASE("random_hex gives fresh hex digits") {
  const std::string a = ringkv::common::random_hex(16);
  const std::string b = ringkv::common::random_hex(16);
  CHECK(a.size() == 32);
  CHECK(a.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(a != b);
}
