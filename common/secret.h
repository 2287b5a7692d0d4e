// Secrets: the constant-time comparison of passwords (AUTH, HELLO ... AUTH), the keyed proof
// with which peers show the cluster secret in their handshake without sending it, and the random
// nonces that make each handshake's proof unique.
#pragma once

#include <string>
#include <string_view>

namespace ringkv::common {

// Whether `given` equals `expected`. Both are hashed to fixed-size SHA-256 digests and the
// digests compared without an early exit, so the time taken reveals neither the first differing
// byte nor the expected secret's length.
bool secret_equals(std::string_view given, std::string_view expected);

// SHA-256 of `text` as 64 lowercase hex digits (ACL password digests, as Redis stores them).
std::string sha256_hex(std::string_view text);

// Whether two strings are equal, comparing every byte of equal-length strings without an early
// exit (for digests, whose length is public).
bool constant_time_equals(std::string_view a, std::string_view b);

// HMAC-SHA256 of `message` keyed with `secret`, as 64 lowercase hex digits.
std::string hmac_sha256_hex(std::string_view secret, std::string_view message);

// `bytes` bytes from OpenSSL's CSPRNG as 2 * bytes lowercase hex digits (for nonces). Aborts if
// the generator cannot be seeded: a predictable nonce would defeat its purpose.
std::string random_hex(size_t bytes);

}  // namespace ringkv::common
