// How greensched's HTTP listeners (serve's extender, dispatch's service) are secured, in one
// place so that both follow the same rules:
//
//   TLS             --tls-cert FILE --tls-key FILE: HTTPS (httplib::SSLServer, TLS 1.2 or later)
//   client certs    --client-ca FILE: requests must come over a connection whose client showed a
//                   certificate signed by that CA (mutual TLS); needs TLS
//   bearer token    --auth-token-file FILE: requests must carry `Authorization: Bearer <token>`
//                   (token_file.hpp: constant-time compare, re-read when the file changes)
//
// Paths listed as open (GET /healthz, for probes that carry no credentials) are served without
// a token or certificate; every other request without them gets 401 with a JSON error. A
// client certificate is asked for at the handshake but checked per request, so the open paths
// stay reachable over TLS without one; a certificate the CA did not sign fails the handshake.
//
// The exposure rule: a listener on anything but a loopback address (127.0.0.0/8, ::1,
// localhost) must have TLS and a way to authenticate clients (a token or a client CA); else it
// is refused, unless `insecure` is set (the caller then prints the warning it is given).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "greensched/core/status.hpp"

namespace httplib {
class Server;
}

namespace greensched::serve {

struct ListenerSecurity {
  std::string tls_cert;    // PEM certificate (chain); with tls_key: serve HTTPS
  std::string tls_key;     // PEM private key of tls_cert
  std::string client_ca;   // PEM CA bundle that signs the clients' certificates (mTLS)
  std::string token_file;  // file holding the bearer token clients must send
  bool insecure = false;   // serve a non-loopback address without TLS and authentication

  bool tls() const { return !tls_cert.empty() || !tls_key.empty(); }
  bool authenticates() const { return !token_file.empty() || !client_ca.empty(); }
};

// What the guard of a listener lets through, and how its refusals read.
struct GuardOptions {
  std::vector<std::string> open_paths = {"/healthz"};  // served without credentials
  std::string error_key = "error";                     // 401 body: {error_key: why}
};

// Whether `host` (as given to --listen; [::1] brackets allowed) is a loopback address:
// 127.0.0.0/8, ::1 (also as ::ffff:127.x.y.z) or localhost.
bool is_loopback_host(std::string_view host);

// Checks the options among themselves: a certificate needs its key and the other way round,
// a client CA needs TLS; the files named must be readable, the token file must hold a token.
Status check_listener_options(const ListenerSecurity& security);

// The exposure rule for listening on `host`: an error (what is missing and what to add) when
// it is refused; else the warning to print (empty when there is nothing to warn about).
Result<std::string> check_exposure(std::string_view host, const ListenerSecurity& security);

// A server for `security`: an httplib::SSLServer with TLS (its certificate, key and client
// CA loaded, errors naming the file), else an httplib::Server; with a token or a client CA, a
// pre-routing handler that answers 401 to requests lacking them (but to guard.open_paths).
Result<std::unique_ptr<httplib::Server>> make_listener(const ListenerSecurity& security,
                                                       const GuardOptions& guard = {});

// "HOST:PORT" (HOST may be [v6]) -> host and port 0-65535; false when malformed.
bool split_listen_address(const std::string& listen, std::string& host, int& port);

}  // namespace greensched::serve
