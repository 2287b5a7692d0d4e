// Peer authentication: the challenge-response with which two nodes prove to each other that they
// hold the same [cluster] secret when one opens a link to the other. Each side contributes a
// fresh random nonce and each proof covers both nonces, so a proof seen on one connection is
// worthless on any other, and a proof for one direction never passes for the other.
#pragma once

#include <string>
#include <string_view>

namespace ringkv::cluster {

// Which side of the link a proof speaks for: the node that opened it, or the one that accepted.
enum class ProofRole { kConnector, kAcceptor };

// A fresh nonce: 128 bits from the CSPRNG as 32 lowercase hex digits.
std::string make_nonce();

// Whether `text` is acceptable as the other side's nonce: 32 to 128 hex digits.
bool valid_nonce(std::string_view text);

// HMAC-SHA256 (64 hex digits), keyed with `secret`, of the role's label, both nonces, the
// connecting node's address and the fingerprint of the ring of the side that proves.
std::string handshake_proof(std::string_view secret, ProofRole role,
                            std::string_view connector_nonce, std::string_view acceptor_nonce,
                            std::string_view address, std::string_view fingerprint);

// Whether `proof` is handshake_proof(...) of the same arguments (compared in constant time).
bool proof_matches(std::string_view proof, std::string_view secret, ProofRole role,
                   std::string_view connector_nonce, std::string_view acceptor_nonce,
                   std::string_view address, std::string_view fingerprint);

}  // namespace ringkv::cluster
