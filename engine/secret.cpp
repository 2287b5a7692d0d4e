// Secrets through OpenSSL's SHA-256, HMAC and constant-time memory comparison.
#include "engine/secret.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

namespace ringkv::engine {
namespace {

void sha256(std::string_view text, unsigned char (&digest)[SHA256_DIGEST_LENGTH]) {
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest);
}

}  // namespace

bool secret_equals(std::string_view given, std::string_view expected) {
  unsigned char a[SHA256_DIGEST_LENGTH];
  unsigned char b[SHA256_DIGEST_LENGTH];
  sha256(given, a);
  sha256(expected, b);
  return CRYPTO_memcmp(a, b, sizeof(a)) == 0;
}

std::string hmac_sha256_hex(std::string_view secret, std::string_view message) {
  static constexpr char kHex[] = "0123456789abcdef";
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac, &len);
  std::string out;
  out.reserve(2 * len);
  for (unsigned int i = 0; i < len; ++i) {
    out.push_back(kHex[mac[i] >> 4]);
    out.push_back(kHex[mac[i] & 0xf]);
  }
  return out;
}

}  // namespace ringkv::engine
