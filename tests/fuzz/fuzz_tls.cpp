// libFuzzer target for the TLS read path (common/tls.h): the bytes a node reads from a TLS
// connection, fed to a TlsChannel in pieces. The first byte picks what receives them:
//   0: a fresh accepting channel (a client's handshake: ClientHello and what follows);
//   1: an accepting channel whose handshake with a real client has finished (records after
//      the handshake: application data, alerts, garbage that fails decryption);
//   2: a connecting channel that sent its ClientHello (a peer's answers on a tls-cluster link).
// The second byte sets the piece size. Whatever arrives, the channel must fail cleanly (no
// crash, no leak under ASan), report an error or keep waiting, and never hand over plain text
// before its handshake is done.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>

#include "common/tls.h"

namespace {

using ringkv::common::TlsChannel;
using ringkv::common::TlsContext;

// A self-signed P-256 certificate for CN "ringkv fuzz", valid until 2126: test data only.
constexpr char kCert[] = R"(-----BEGIN CERTIFICATE-----
MIIBgzCCASmgAwIBAgIUNLeyMp875YFqR5/UgbAkvUOSp9wwCgYIKoZIzj0EAwIw
FjEUMBIGA1UEAwwLcmluZ2t2IGZ1enowIBcNMjYxMjAyMDUxNDI4WhgPMjEyNjEx
MDgwNTE0MjhaMBYxFDASBgNVBAMMC3JpbmdrdiBmdXp6MFkwEwYHKoZIzj0CAQYI
KoZIzj0DAQcDQgAEvdEW6yiPWSNoiY7MaAXY/xlzme4ftOwmje9GbDRAKIqOwVvl
sO2Ige65wNW4cx/fhkZMn87UOeTTdVuQLKI1SqNTMFEwHQYDVR0OBBYEFH6qkyqM
AfNqSxrA8zQiFJRef1adMB8GA1UdIwQYMBaAFH6qkyqMAfNqSxrA8zQiFJRef1ad
MA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDSAAwRQIhAPqfE8A3eyvjBrz8
HMcEZqVt84hxQ2Po++LkiPq1pa55AiBszKPZvREJmfY6hSNJdu3EUW7OjjStDDdI
vi/fcA7s6A==
-----END CERTIFICATE-----
)";
constexpr char kKey[] = R"(-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgLzmIrzq2UY/N7CWL
0NgZVoVdZvw2L71Rd012BCvB0XWhRANCAAS90RbrKI9ZI2iJjsxoBdj/GXOZ7h+0
7CaN70ZsNEAoio7BW+Ww7YiB7rnA1bhzH9+GRkyfztQ55NN1W5AsojVK
-----END PRIVATE KEY-----
)";

void check(bool ok) {
  if (!ok) std::abort();
}

std::shared_ptr<const TlsContext> context() {
  static const std::shared_ptr<const TlsContext> kContext = [] {
    const std::string dir = "/tmp/ringkv-fuzz-tls-" + std::to_string(::getpid());
    std::string cert = dir + ".crt";
    std::string key = dir + ".key";
    std::ofstream(cert) << kCert;
    std::ofstream(key) << kKey;
    ringkv::common::TlsSettings settings;
    settings.cert_file = cert;
    settings.key_file = key;
    settings.ca_cert_file = cert;
    settings.auth_clients = "optional";
    std::string error;
    auto made = TlsContext::create(settings, error);
    check(made != nullptr);
    std::remove(cert.c_str());
    std::remove(key.c_str());
    return made;
  }();
  return kContext;
}

// Runs a handshake between two in-memory channels; true once both are established.
bool handshake(TlsChannel& client, TlsChannel& server) {
  std::string to_server;
  std::string to_client;
  std::string plain;
  check(client.start());
  for (int round = 0; round < 10 && !(client.established() && server.established()); ++round) {
    client.take_output(to_server);
    if (!server.receive(to_server, plain)) return false;
    to_server.clear();
    server.take_output(to_client);
    if (!client.receive(to_client, plain)) return false;
    to_client.clear();
  }
  return client.established() && server.established();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const int mode = data[0] % 3;
  const size_t piece = 1 + data[1] % 64;
  std::string_view input(reinterpret_cast<const char*>(data) + 2, size - 2);

  auto server = std::make_unique<TlsChannel>(context(), TlsChannel::Role::kAccept);
  auto client = std::make_unique<TlsChannel>(context(), TlsChannel::Role::kConnect);
  TlsChannel* target = server.get();
  if (mode == 1) {
    check(handshake(*client, *server));
  } else if (mode == 2) {
    check(client->start());
    std::string hello;
    client->take_output(hello);
    check(!hello.empty());
    target = client.get();
  }
  std::string plain;
  std::string out;
  while (!input.empty()) {
    const std::string_view chunk = input.substr(0, piece);
    input.remove_prefix(chunk.size());
    const bool ok = target->receive(chunk, plain);
    target->take_output(out);
    // Application data only ever comes out of an established channel.
    check(plain.empty() || target->established());
    if (!ok) break;
  }
  return 0;
}
