// Peer authentication: nonces from the engine's CSPRNG helper, proofs as HMAC-SHA256.
#include "cluster/peer_auth.h"

#include <cctype>

#include "common/secret.h"

namespace ringkv::cluster {
namespace {

constexpr size_t kNonceBytes = 16;
constexpr size_t kMinNonceDigits = 2 * kNonceBytes;
constexpr size_t kMaxNonceDigits = 128;

}  // namespace

std::string make_nonce() { return common::random_hex(kNonceBytes); }

bool valid_nonce(std::string_view text) {
  if (text.size() < kMinNonceDigits || text.size() > kMaxNonceDigits) return false;
  for (char c : text) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

std::string handshake_proof(std::string_view secret, ProofRole role,
                            std::string_view connector_nonce, std::string_view acceptor_nonce,
                            std::string_view address, std::string_view fingerprint) {
  // Nonces and fingerprint are hex, so the newlines separate the fields unambiguously even if
  // the address (a peer's claim) contains one.
  std::string message =
      role == ProofRole::kConnector ? "ringkv.peer.connect\n" : "ringkv.peer.accept\n";
  message.append(connector_nonce);
  message.push_back('\n');
  message.append(acceptor_nonce);
  message.push_back('\n');
  message.append(address);
  message.push_back('\n');
  message.append(fingerprint);
  return common::hmac_sha256_hex(secret, message);
}

bool proof_matches(std::string_view proof, std::string_view secret, ProofRole role,
                   std::string_view connector_nonce, std::string_view acceptor_nonce,
                   std::string_view address, std::string_view fingerprint) {
  return common::secret_equals(
      proof, handshake_proof(secret, role, connector_nonce, acceptor_nonce, address, fingerprint));
}

}  // namespace ringkv::cluster
