// TLS over memory BIOs: OpenSSL encrypts and decrypts, the caller moves the bytes. A TlsChannel
// never touches a socket, so the event loop (libuv) keeps doing all the I/O, client connections
// and peer links alike use it, and a fuzzer can feed it bytes directly. A TlsContext holds the
// certificates and settings (Redis's tls-* parameters) for the server side and for the links this
// node opens; contexts are rebuilt when the settings change, channels keep the one they began
// with.
#pragma once

#include <memory>
#include <string>
#include <string_view>

typedef struct ssl_ctx_st SSL_CTX;
typedef struct ssl_st SSL;
typedef struct bio_st BIO;

namespace ringkv::common {

// Redis's tls-* parameters, as far as a context needs them.
struct TlsSettings {
  std::string cert_file;               // tls-cert-file: this node's certificate (PEM)
  std::string key_file;                // tls-key-file: its private key (PEM)
  std::string key_file_pass;           // tls-key-file-pass: the key's passphrase, if encrypted
  std::string ca_cert_file;            // tls-ca-cert-file: CAs that sign clients' and peers' certs
  std::string ca_cert_dir;             // tls-ca-cert-dir: the same, as a hashed directory
  std::string auth_clients = "yes";    // tls-auth-clients: yes, no or optional
  std::string protocols;               // tls-protocols: "TLSv1.2 TLSv1.3" (empty = those two)
  std::string ciphers;                 // tls-ciphers: TLSv1.2 cipher list (empty = OpenSSL's)
  std::string ciphersuites;            // tls-ciphersuites: TLSv1.3 suites (empty = OpenSSL's)
  bool prefer_server_ciphers = false;  // tls-prefer-server-ciphers
  bool session_caching = true;         // tls-session-caching
};

class TlsContext {
 public:
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  // Loads the certificates and applies the settings. Returns null and sets `error` (OpenSSL's
  // reason, naming the file) when they cannot be used.
  static std::shared_ptr<TlsContext> create(const TlsSettings& settings, std::string& error);

  // For connections this node accepts, and for the ones it opens (peer links): both present
  // this node's certificate and check the other side's against the CAs.
  SSL_CTX* server() const { return server_; }
  SSL_CTX* client() const { return client_; }

 private:
  TlsContext() = default;
  SSL_CTX* server_ = nullptr;
  SSL_CTX* client_ = nullptr;
};

// What OpenSSL's error queue says last went wrong ("error:0A00010B:SSL routines::wrong version
// number"), emptying the queue; `fallback` when it is empty.
std::string tls_error_text(std::string_view fallback);

class TlsChannel {
 public:
  enum class Role { kAccept, kConnect };

  TlsChannel(std::shared_ptr<const TlsContext> context, Role role);
  ~TlsChannel();
  TlsChannel(const TlsChannel&) = delete;
  TlsChannel& operator=(const TlsChannel&) = delete;

  // Starts the handshake of a connecting side (its ClientHello goes to output()).
  bool start();
  // Takes bytes read from the network: advances the handshake and appends the application data
  // they carry to `plain`. Returns false when the connection must close: a TLS error (error()
  // says which), or the other side's close_notify (error() empty).
  bool receive(std::string_view bytes, std::string& plain);
  // Encrypts application data (kept until the handshake is done). False on a TLS error.
  bool send(std::string_view plain);
  // Ends the session in order: its close_notify alert goes to output() (once established and
  // unless the session failed; a best effort, as the connection closes right after it).
  void close_notify();
  // Moves the bytes waiting to go to the network (records, alerts) to the end of `out`.
  void take_output(std::string& out);
  bool has_output() const;

  bool established() const { return established_; }
  // Whether the other side presented a certificate that the CAs verified.
  bool peer_verified() const;
  const std::string& error() const { return error_; }

 private:
  bool advance();
  bool flush_pending();

  std::shared_ptr<const TlsContext> context_;
  SSL* ssl_ = nullptr;
  BIO* in_ = nullptr;   // network → OpenSSL
  BIO* out_ = nullptr;  // OpenSSL → network
  bool established_ = false;
  std::string pending_;  // application data sent before the handshake finished
  std::string error_;
};

}  // namespace ringkv::common
