#include "greensched/serve/listener_security.hpp"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>

#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "greensched/serve/token_file.hpp"

namespace greensched::serve {
namespace {

// The newest OpenSSL error as text ("" when none), and the queue emptied.
std::string openssl_error() {
  std::string text;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    text = buf;
  }
  return text;
}

Status readable(const std::string& path, std::string_view flag) {
  std::ifstream in(path);
  if (!in) return Error{fmt::format("{} {}: cannot read it", flag, path), ErrorCode::kNotFound};
  return Status::Ok();
}

// The SSL context for `s`: TLS 1.2 or later, its certificate and key (checked to belong
// together), and with a client CA, client certificates asked for and verified.
bool setup_tls(SSL_CTX& ctx, const ListenerSecurity& s, std::string& error) {
  SSL_CTX_set_options(&ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION |
                                SSL_OP_NO_SESSION_RESUMPTION_ON_RENEGOTIATION);
  if (SSL_CTX_set_min_proto_version(&ctx, TLS1_2_VERSION) != 1) {
    error = fmt::format("cannot require TLS 1.2: {}", openssl_error());
    return false;
  }
  if (SSL_CTX_use_certificate_chain_file(&ctx, s.tls_cert.c_str()) != 1) {
    error = fmt::format("--tls-cert {}: not a PEM certificate: {}", s.tls_cert, openssl_error());
    return false;
  }
  if (SSL_CTX_use_PrivateKey_file(&ctx, s.tls_key.c_str(), SSL_FILETYPE_PEM) != 1) {
    error = fmt::format(
        "--tls-key {}: not the PEM private key (without a passphrase) of "
        "--tls-cert {}: {}",
        s.tls_key, s.tls_cert, openssl_error());
    return false;
  }
  if (SSL_CTX_check_private_key(&ctx) != 1) {
    error = fmt::format("--tls-key {} is not the key of --tls-cert {}: {}", s.tls_key, s.tls_cert,
                        openssl_error());
    return false;
  }
  if (!s.client_ca.empty()) {
    if (SSL_CTX_load_verify_locations(&ctx, s.client_ca.c_str(), nullptr) != 1) {
      error =
          fmt::format("--client-ca {}: not a PEM CA certificate: {}", s.client_ca, openssl_error());
      return false;
    }
    // Tells clients which CA to pick a certificate for.
    STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(s.client_ca.c_str());
    if (names == nullptr) {
      error =
          fmt::format("--client-ca {}: no CA certificate in it: {}", s.client_ca, openssl_error());
      return false;
    }
    SSL_CTX_set_client_CA_list(&ctx, names);
    // Asked for, not required, at the handshake: the open paths stay reachable without one
    // (the guard refuses the rest). A certificate that does not verify ends the handshake.
    SSL_CTX_set_verify(&ctx, SSL_VERIFY_PEER, nullptr);
    static constexpr unsigned char kContext[] = "greensched";
    SSL_CTX_set_session_id_context(&ctx, kContext, sizeof kContext - 1);
  }
  return true;
}

bool has_verified_client_certificate(const httplib::Request& req) {
  if (req.ssl == nullptr) return false;
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
  const X509* cert = SSL_get0_peer_certificate(req.ssl);
  const bool present = cert != nullptr;
#else
  X509* cert = SSL_get_peer_certificate(req.ssl);
  const bool present = cert != nullptr;
  X509_free(cert);
#endif
  return present && SSL_get_verify_result(req.ssl) == X509_V_OK;
}

// Answers 401 with {key: why}, and closes the connection: the request's body was not read,
// so the next request on it would be read from the middle of that body.
void refuse(httplib::Response& res, const std::string& key, const std::string& why, bool bearer) {
  res.status = 401;
  res.set_header("Connection", "close");
  if (bearer) res.set_header("WWW-Authenticate", "Bearer realm=\"greensched\"");
  res.set_content(nlohmann::json{{key, why}}.dump(), "application/json");
}

// Why a request's body cannot be served ("" when it can): httplib reads the body of POST, PUT,
// PATCH and DELETE only; another method's body would stay in the connection and be read as
// the next request (which, over TLS, then gets 400). Refused, and the connection closed.
std::string unread_body(const httplib::Request& req) {
  if (req.method == "POST" || req.method == "PUT" || req.method == "PATCH" ||
      req.method == "DELETE") {
    return "";
  }
  const std::string length = req.get_header_value("Content-Length");
  if ((!length.empty() && length != "0") || req.has_header("Transfer-Encoding")) {
    return fmt::format("a {} request carries no body (send it without one)", req.method);
  }
  return "";
}

}  // namespace

bool is_loopback_host(std::string_view host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  std::string h(host);
  std::transform(h.begin(), h.end(), h.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (h == "localhost" || h == "localhost.") return true;
  unsigned char v4[4];
  if (inet_pton(AF_INET, h.c_str(), v4) == 1) return v4[0] == 127;
  unsigned char v6[16];
  if (inet_pton(AF_INET6, h.c_str(), v6) == 1) {
    static constexpr unsigned char kLoopback[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    static constexpr unsigned char kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (std::memcmp(v6, kLoopback, 16) == 0) return true;
    return std::memcmp(v6, kMapped, 12) == 0 && v6[12] == 127;
  }
  return false;
}

Status check_listener_options(const ListenerSecurity& s) {
  if (s.tls_cert.empty() != s.tls_key.empty()) {
    return Error{s.tls_cert.empty() ? "--tls-key needs --tls-cert (the certificate it belongs to)"
                                    : "--tls-cert needs --tls-key (its private key)"};
  }
  if (!s.client_ca.empty() && !s.tls()) {
    return Error{"--client-ca needs TLS: add --tls-cert FILE --tls-key FILE"};
  }
  for (const auto& [path, flag] :
       {std::pair{&s.tls_cert, "--tls-cert"}, std::pair{&s.tls_key, "--tls-key"},
        std::pair{&s.client_ca, "--client-ca"}, std::pair{&s.token_file, "--auth-token-file"}}) {
    if (path->empty()) continue;
    if (Status r = readable(*path, flag); !r.ok()) return r;
  }
  if (!s.token_file.empty()) {
    auto token = TokenFile::open(s.token_file);  // an empty file is an error now, not later
    if (!token.ok()) return token.status();
  }
  return Status::Ok();
}

Result<std::string> check_exposure(std::string_view host, const ListenerSecurity& s) {
  if (is_loopback_host(host) || (s.tls() && s.authenticates())) return std::string();
  std::string missing;
  if (!s.tls()) missing = "no TLS (--tls-cert FILE --tls-key FILE)";
  if (!s.authenticates()) {
    missing += fmt::format("{}no authentication (--auth-token-file FILE or --client-ca FILE)",
                           missing.empty() ? "" : " and ");
  }
  if (s.insecure) {
    return fmt::format(
        "--insecure: listening on {} with {}: anyone who can reach this address can read and "
        "send requests",
        host, missing);
  }
  return Error{fmt::format(
      "refusing to listen on {} with {}: it is not a loopback address, so others could read and "
      "send requests. Add --tls-cert FILE --tls-key FILE and --auth-token-file FILE (or "
      "--client-ca FILE), or listen on 127.0.0.1, or pass --insecure to serve it unprotected "
      "anyway",
      host, missing)};
}

Result<std::unique_ptr<httplib::Server>> make_listener(const ListenerSecurity& s,
                                                       const GuardOptions& guard) {
  if (Status ok = check_listener_options(s); !ok.ok()) return ok.error();
  std::shared_ptr<TokenFile> token;
  if (!s.token_file.empty()) {
    auto opened = TokenFile::open(s.token_file);
    if (!opened.ok()) return Error{opened.error(), opened.code()};
    token = std::move(opened.value());
  }
  std::unique_ptr<httplib::Server> server;
  if (s.tls()) {
    std::string error;
    auto tls = std::make_unique<httplib::SSLServer>(
        [&s, &error](SSL_CTX& ctx) { return setup_tls(ctx, s, error); });
    if (!tls->is_valid()) {
      return Error{error.empty() ? fmt::format("cannot set up TLS: {}", openssl_error()) : error};
    }
    server = std::move(tls);
  } else {
    server = std::make_unique<httplib::Server>();
  }
  const bool need_cert = !s.client_ca.empty();
  server->set_pre_routing_handler(
      [token, need_cert, guard](const httplib::Request& req, httplib::Response& res) {
        using R = httplib::Server::HandlerResponse;
        if (const std::string why = unread_body(req); !why.empty()) {
          res.status = 400;
          res.set_header("Connection", "close");
          res.set_content(nlohmann::json{{guard.error_key, why}}.dump(), "application/json");
          return R::Handled;
        }
        if (!token && !need_cert) return R::Unhandled;
        if (std::find(guard.open_paths.begin(), guard.open_paths.end(), req.path) !=
            guard.open_paths.end()) {
          return R::Unhandled;
        }
        if (need_cert && !has_verified_client_certificate(req)) {
          refuse(res, guard.error_key,
                 "a client certificate signed by the server's --client-ca is required", false);
          return R::Handled;
        }
        if (token) {
          const std::string authorization = req.get_header_value("Authorization");
          const auto presented = bearer_token(authorization);
          if (!presented) {
            refuse(res, guard.error_key,
                   "missing bearer token: send the header Authorization: Bearer <token>", true);
            return R::Handled;
          }
          if (!token->matches(*presented)) {
            refuse(res, guard.error_key, "wrong bearer token", true);
            return R::Handled;
          }
        }
        return R::Unhandled;
      });
  return server;
}

bool split_listen_address(const std::string& listen, std::string& host, int& port) {
  const std::size_t colon = listen.rfind(':');
  if (colon == std::string::npos) return false;
  host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  const std::string p = listen.substr(colon + 1);
  if (p.empty() || p.size() > 5 || p.find_first_not_of("0123456789") != std::string::npos) {
    return false;
  }
  port = std::stoi(p);
  return !host.empty() && port <= 65535;
}

}  // namespace greensched::serve
