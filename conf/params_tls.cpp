// The TLS rows of the parameter table: tls-port beside port in [server], the other tls-*
// parameters (Redis's names, each a TOML key of [tls], a flag and a CONFIG parameter) and
// tls-cluster in [tls]. Certificate and settings changes by CONFIG SET take effect for new
// connections without a restart (the server rebuilds its TLS context, see server/tls_listener).
#include "conf/param_rows.h"

namespace ringkv::conf::detail {
namespace {

using T = TlsOptions;
constexpr auto kTls = &Config::tls;

// `flag` is "--" followed by the key (a literal: rows keep views of their names).
Row tls_string(std::string_view flag, std::string_view description, std::string T::*member) {
  const std::string_view key = flag.substr(2);
  return string_row(Head{"tls", key, flag, key, true, description},
                    Field<T, std::string>{kTls, member}, nullptr);
}

}  // namespace

Row tls_port_row() {
  return int_row(Head{"server", "tls-port", "--tls-port", "tls-port", false,
                      "TCP port for TLS clients (0 = none)"},
                 Field<ServerOptions, int>{&Config::server, &ServerOptions::tls_port}, 0, 65535);
}

std::vector<Row> tls_rows() {
  std::vector<Row> rows = {
      tls_string("--tls-cert-file", "This node's certificate (PEM), shown to clients and peers",
                 &T::cert_file),
      tls_string("--tls-key-file", "The certificate's private key (PEM)", &T::key_file),
      tls_string("--tls-key-file-pass", "Passphrase of an encrypted tls-key-file",
                 &T::key_file_pass),
      tls_string("--tls-ca-cert-file", "CA certificates that sign clients' and peers' certificates",
                 &T::ca_cert_file),
      tls_string("--tls-ca-cert-dir", "The same, as an OpenSSL hashed directory", &T::ca_cert_dir),
      enum_row(Head{"tls", "tls-auth-clients", "--tls-auth-clients", "tls-auth-clients", true,
                    "Client certificates: yes (required), optional or no"},
               Field<T, std::string>{kTls, &T::auth_clients}, {"no", "yes", "optional"}, {}),
      tls_string("--tls-protocols", "Protocols allowed, e.g. \"TLSv1.2 TLSv1.3\" (empty = those)",
                 &T::protocols),
      tls_string("--tls-ciphers", "TLSv1.2 cipher list (empty = OpenSSL's default)", &T::ciphers),
      tls_string("--tls-ciphersuites", "TLSv1.3 cipher suites (empty = OpenSSL's default)",
                 &T::ciphersuites),
      bool_row(Head{"tls", "tls-prefer-server-ciphers", "--tls-prefer-server-ciphers",
                    "tls-prefer-server-ciphers", true,
                    "Choose the cipher by this node's order rather than the client's"},
               Field<T, bool>{kTls, &T::prefer_server_ciphers}),
      bool_row(Head{"tls", "tls-session-caching", "--tls-session-caching", "tls-session-caching",
                    true, "Let clients resume TLS sessions"},
               Field<T, bool>{kTls, &T::session_caching}),
      bool_row(Head{"tls", "tls-cluster", "--tls-cluster", "tls-cluster", false,
                    "Peer links and MIGRATE over TLS with certificates checked both ways (ring "
                    "addresses name tls-ports)"},
               Field<T, bool>{kTls, &T::cluster}),
      int_row(Head{"tls", "tls-handshake-timeout", "--tls-handshake-timeout", "", false,
                   "Close a TLS connection whose handshake takes longer (milliseconds)"},
              Field<T, int64_t>{kTls, &T::handshake_timeout_ms}, 1, kMaxTimeoutMs),
  };
  return rows;
}

}  // namespace ringkv::conf::detail
