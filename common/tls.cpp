// TLS contexts and memory-BIO channels over OpenSSL, with Redis's defaults (TLSv1.2 and 1.3, no
// compression, no client renegotiation, client certificates required unless tls-auth-clients
// says otherwise).
#include "common/tls.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <vector>

namespace ringkv::common {
namespace {

constexpr size_t kReadChunk = 16 * 1024;

int password_callback(char* buf, int size, int /*rwflag*/, void* userdata) {
  const auto* pass = static_cast<const std::string*>(userdata);
  if (pass == nullptr || pass->empty()) return 0;
  const int n = std::min(size, static_cast<int>(pass->size()));
  std::memcpy(buf, pass->data(), static_cast<size_t>(n));
  return n;
}

// Redis's tls-protocols: which of TLSv1 ... TLSv1.3 are allowed, as SSL_OP_NO_* options to set.
bool protocol_options(std::string_view text, uint64_t& options) {
  constexpr std::pair<std::string_view, uint64_t> kProtocols[] = {{"tlsv1", SSL_OP_NO_TLSv1},
                                                                  {"tlsv1.1", SSL_OP_NO_TLSv1_1},
                                                                  {"tlsv1.2", SSL_OP_NO_TLSv1_2},
                                                                  {"tlsv1.3", SSL_OP_NO_TLSv1_3}};
  uint64_t allowed = 0;
  if (text.empty()) text = "TLSv1.2 TLSv1.3";
  while (!text.empty()) {
    const size_t space = text.find(' ');
    std::string word(text.substr(0, space));
    text = space == std::string_view::npos ? std::string_view{} : text.substr(space + 1);
    if (word.empty()) continue;
    for (char& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    bool known = false;
    for (const auto& [name, option] : kProtocols) {
      if (word == name) {
        allowed |= option;
        known = true;
      }
    }
    if (!known) return false;
  }
  if (allowed == 0) return false;
  options = 0;
  for (const auto& [name, option] : kProtocols) {
    if ((allowed & option) == 0) options |= option;
  }
  return true;
}

SSL_CTX* make_context(const TlsSettings& s, bool server, std::string& error) {
  SSL_CTX* ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
  if (ctx == nullptr) {
    error = tls_error_text("cannot create an SSL context");
    return nullptr;
  }
  uint64_t no_protocols = 0;
  if (!protocol_options(s.protocols, no_protocols)) {
    error = "Invalid tls-protocols specified";
    SSL_CTX_free(ctx);
    return nullptr;
  }
  // OpenSSL 3 refuses client-initiated renegotiation by default.
  SSL_CTX_set_options(ctx, SSL_OP_NO_SSLv2 | SSL_OP_NO_SSLv3 | SSL_OP_NO_COMPRESSION |
                               SSL_OP_SINGLE_DH_USE | no_protocols);
  if (s.prefer_server_ciphers) SSL_CTX_set_options(ctx, SSL_OP_CIPHER_SERVER_PREFERENCE);
  if (server && s.session_caching) {
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER);
    SSL_CTX_set_session_id_context(ctx, reinterpret_cast<const unsigned char*>("ringkv"), 6);
  } else {
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
  }
  SSL_CTX_set_default_passwd_cb(ctx, password_callback);
  SSL_CTX_set_default_passwd_cb_userdata(ctx, const_cast<std::string*>(&s.key_file_pass));
  auto fail = [&](const std::string& what) {
    error = what + ": " + tls_error_text("unknown error");
    SSL_CTX_free(ctx);
    return nullptr;
  };
  if (SSL_CTX_use_certificate_chain_file(ctx, s.cert_file.c_str()) <= 0) {
    return fail("Failed to load certificate: " + s.cert_file);
  }
  if (SSL_CTX_use_PrivateKey_file(ctx, s.key_file.c_str(), SSL_FILETYPE_PEM) <= 0) {
    return fail("Failed to load private key: " + s.key_file);
  }
  // The passphrase is only needed while the key loads.
  SSL_CTX_set_default_passwd_cb_userdata(ctx, nullptr);
  if (SSL_CTX_check_private_key(ctx) != 1) return fail("Private key does not match certificate");
  if ((!s.ca_cert_file.empty() || !s.ca_cert_dir.empty()) &&
      SSL_CTX_load_verify_locations(ctx, s.ca_cert_file.empty() ? nullptr : s.ca_cert_file.c_str(),
                                    s.ca_cert_dir.empty() ? nullptr : s.ca_cert_dir.c_str()) <= 0) {
    return fail("Failed to configure CA certificate(s) file/directory");
  }
  if (!s.ciphers.empty() && SSL_CTX_set_cipher_list(ctx, s.ciphers.c_str()) != 1) {
    return fail("Failed to configure ciphers: " + s.ciphers);
  }
  if (!s.ciphersuites.empty() && SSL_CTX_set_ciphersuites(ctx, s.ciphersuites.c_str()) != 1) {
    return fail("Failed to configure ciphersuites: " + s.ciphersuites);
  }
  int verify = SSL_VERIFY_PEER;
  if (server) {
    if (s.auth_clients == "no") {
      verify = SSL_VERIFY_NONE;
    } else if (s.auth_clients != "optional") {
      verify |= SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
    }
  }
  SSL_CTX_set_verify(ctx, verify, nullptr);
  return ctx;
}

}  // namespace

std::string tls_error_text(std::string_view fallback) {
  unsigned long code = 0;
  unsigned long last = 0;
  while ((code = ERR_get_error()) != 0) last = code;
  if (last == 0) return std::string(fallback);
  char buf[256];
  ERR_error_string_n(last, buf, sizeof(buf));
  return buf;
}

TlsContext::~TlsContext() {
  SSL_CTX_free(server_);
  SSL_CTX_free(client_);
}

std::shared_ptr<TlsContext> TlsContext::create(const TlsSettings& settings, std::string& error) {
  ERR_clear_error();
  std::shared_ptr<TlsContext> context(new TlsContext());
  context->server_ = make_context(settings, true, error);
  if (context->server_ == nullptr) return nullptr;
  context->client_ = make_context(settings, false, error);
  if (context->client_ == nullptr) return nullptr;
  return context;
}

TlsChannel::TlsChannel(std::shared_ptr<const TlsContext> context, Role role)
    : context_(std::move(context)) {
  ssl_ = SSL_new(role == Role::kAccept ? context_->server() : context_->client());
  in_ = BIO_new(BIO_s_mem());
  out_ = BIO_new(BIO_s_mem());
  // A memory BIO that runs dry asks for more instead of reporting the end of the stream.
  BIO_set_mem_eof_return(in_, -1);
  SSL_set_bio(ssl_, in_, out_);
  if (role == Role::kAccept) {
    SSL_set_accept_state(ssl_);
  } else {
    SSL_set_connect_state(ssl_);
  }
}

TlsChannel::~TlsChannel() { SSL_free(ssl_); }

bool TlsChannel::advance() {
  if (established_) return true;
  ERR_clear_error();
  const int rc = SSL_do_handshake(ssl_);
  if (rc == 1) {
    established_ = true;
    return flush_pending();
  }
  const int err = SSL_get_error(ssl_, rc);
  if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) return true;
  error_ = tls_error_text(err == SSL_ERROR_SYSCALL ? "connection closed during the handshake"
                                                   : "handshake failed");
  return false;
}

bool TlsChannel::start() { return advance(); }

bool TlsChannel::receive(std::string_view bytes, std::string& plain) {
  if (!bytes.empty() && BIO_write(in_, bytes.data(), static_cast<int>(bytes.size())) <= 0) {
    error_ = "out of memory";
    return false;
  }
  if (!advance()) return false;
  if (!established_) return true;
  char buf[kReadChunk];
  while (true) {
    ERR_clear_error();
    const int n = SSL_read(ssl_, buf, sizeof(buf));
    if (n > 0) {
      plain.append(buf, static_cast<size_t>(n));
      continue;
    }
    const int err = SSL_get_error(ssl_, n);
    if (err == SSL_ERROR_WANT_READ) return true;
    if (err == SSL_ERROR_ZERO_RETURN) return false;  // close_notify: an orderly end
    error_ = tls_error_text("read failed");
    return false;
  }
}

bool TlsChannel::flush_pending() {
  if (pending_.empty()) return true;
  std::string data;
  data.swap(pending_);
  return send(data);
}

bool TlsChannel::send(std::string_view plain) {
  if (!established_) {
    pending_.append(plain);
    return true;
  }
  while (!plain.empty()) {
    ERR_clear_error();
    const int n = SSL_write(ssl_, plain.data(), static_cast<int>(plain.size()));
    if (n <= 0) {
      error_ = tls_error_text("write failed");
      return false;
    }
    plain.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

void TlsChannel::close_notify() {
  // Not after a fatal error, where OpenSSL forbids SSL_shutdown.
  if (!established_ || !error_.empty()) return;
  ERR_clear_error();
  SSL_shutdown(ssl_);
  ERR_clear_error();
}

void TlsChannel::take_output(std::string& out) {
  const size_t n = BIO_ctrl_pending(out_);
  if (n == 0) return;
  const size_t at = out.size();
  out.resize(at + n);
  const int got = BIO_read(out_, out.data() + at, static_cast<int>(n));
  out.resize(at + static_cast<size_t>(std::max(got, 0)));
}

bool TlsChannel::has_output() const { return BIO_ctrl_pending(out_) > 0; }

bool TlsChannel::peer_verified() const {
  X509* cert = SSL_get1_peer_certificate(ssl_);
  if (cert == nullptr) return false;
  X509_free(cert);
  return SSL_get_verify_result(ssl_) == X509_V_OK;
}

}  // namespace ringkv::common
