// Peer authentication: nonces, and proofs that bind the secret, the direction, both nonces, the
// address and the fingerprint (so none of them can be swapped or replayed).
#include <doctest/doctest.h>

#include <string>

#include "cluster/peer_auth.h"
#include "common/secret.h"

using ringkv::cluster::handshake_proof;
using ringkv::cluster::make_nonce;
using ringkv::cluster::proof_matches;
using ringkv::cluster::ProofRole;
using ringkv::cluster::valid_nonce;

namespace {

const std::string kConnectorNonce(32, 'a');
const std::string kAcceptorNonce(32, 'b');

std::string proof(std::string_view secret = "s", ProofRole role = ProofRole::kConnector,
                  std::string_view cn = kConnectorNonce, std::string_view an = kAcceptorNonce,
                  std::string_view addr = "127.0.0.1:7001", std::string_view fp = "00ff") {
  return handshake_proof(secret, role, cn, an, addr, fp);
}

}  // namespace

TEST_CASE("nonces are fresh and valid") {
  const std::string a = make_nonce();
  CHECK(a.size() == 32);
  CHECK(valid_nonce(a));
  CHECK(make_nonce() != a);
}

TEST_CASE("valid_nonce accepts 32 to 128 hex digits only") {
  CHECK(valid_nonce(std::string(32, 'f')));
  CHECK(valid_nonce(std::string(128, '0')));
  CHECK(valid_nonce("0123456789abcdefABCDEF0123456789"));
  CHECK_FALSE(valid_nonce(std::string(31, 'f')));
  CHECK_FALSE(valid_nonce(std::string(129, 'f')));
  CHECK_FALSE(valid_nonce(std::string(31, 'f') + "g"));
  CHECK_FALSE(valid_nonce(std::string(31, 'f') + " "));
  CHECK_FALSE(valid_nonce(""));
}

TEST_CASE("the proof is the HMAC of the labelled fields") {
  CHECK(proof() ==
        ringkv::common::hmac_sha256_hex("s", "ringkv.peer.connect\n" + kConnectorNonce + "\n" +
                                                 kAcceptorNonce + "\n127.0.0.1:7001\n00ff"));
  CHECK(proof().size() == 64);
}

TEST_CASE("every field of the proof matters") {
  const std::string p = proof();
  CHECK(proof_matches(p, "s", ProofRole::kConnector, kConnectorNonce, kAcceptorNonce,
                      "127.0.0.1:7001", "00ff"));
  CHECK(proof("t") != p);
  CHECK(proof("s", ProofRole::kAcceptor) !=
        p);  // a connector's proof never passes as an acceptor's
  CHECK(proof("s", ProofRole::kConnector, std::string(32, 'c')) != p);
  CHECK(proof("s", ProofRole::kConnector, kConnectorNonce, std::string(32, 'c')) != p);
  CHECK(proof("s", ProofRole::kConnector, kAcceptorNonce, kConnectorNonce) != p);
  CHECK(proof("s", ProofRole::kConnector, kConnectorNonce, kAcceptorNonce, "127.0.0.1:7002") != p);
  CHECK(proof("s", ProofRole::kConnector, kConnectorNonce, kAcceptorNonce, "127.0.0.1:7001",
              "00fe") != p);
}

TEST_CASE("a proof for one challenge fails for another") {
  const std::string first_nonce = make_nonce();
  const std::string p = proof("s", ProofRole::kConnector, kConnectorNonce, first_nonce);
  CHECK(proof_matches(p, "s", ProofRole::kConnector, kConnectorNonce, first_nonce, "127.0.0.1:7001",
                      "00ff"));
  CHECK_FALSE(proof_matches(p, "s", ProofRole::kConnector, kConnectorNonce, make_nonce(),
                            "127.0.0.1:7001", "00ff"));
  CHECK_FALSE(proof_matches(p, "wrong", ProofRole::kConnector, kConnectorNonce, first_nonce,
                            "127.0.0.1:7001", "00ff"));
  CHECK_FALSE(proof_matches("", "s", ProofRole::kConnector, kConnectorNonce, first_nonce,
                            "127.0.0.1:7001", "00ff"));
}
