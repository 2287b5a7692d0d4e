// Secrets through OpenSSL: SHA-256, HMAC, constant-time memory comparison and the CSPRNG.
#include "common/secret.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <cstdlib>

namespace ringkv::common {
namespace {

constexpr char kHex[] = "0123456789abcdef";

std::string to_hex(const unsigned char* data, size_t len) {
  std::string out;
  out.reserve(2 * len);
  for (size_t i = 0; i < len; ++i) {
    out.push_back(kHex[data[i] >> 4]);
    out.push_back(kHex[data[i] & 0xf]);
  }
  return out;
}

void sha256(std::string_view text, unsigned char (&digest)[SHA256_DIGEST_LENGTH]) {
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest);
}

}  // namespace

std::string sha256_hex(std::string_view text) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  sha256(text, digest);
  return to_hex(digest, sizeof(digest));
}

bool constant_time_equals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

bool secret_equals(std::string_view given, std::string_view expected) {
  unsigned char a[SHA256_DIGEST_LENGTH];
  unsigned char b[SHA256_DIGEST_LENGTH];
  sha256(given, a);
  sha256(expected, b);
  return CRYPTO_memcmp(a, b, sizeof(a)) == 0;
}

std::string hmac_sha256_hex(std::string_view secret, std::string_view message) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac, &len);
  return to_hex(mac, len);
}

std::string random_hex(size_t bytes) {
  std::string raw(bytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), static_cast<int>(bytes)) != 1) {
    std::abort();
  }
  return to_hex(reinterpret_cast<const unsigned char*>(raw.data()), bytes);
}

}  // namespace ringkv::common
