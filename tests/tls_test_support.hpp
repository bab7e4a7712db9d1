// Throwaway TLS material for the listener tests, made at test time with the `openssl` command
// line into a scratch directory: a CA, a server certificate it signed for 127.0.0.1 and
// localhost, a client certificate it signed, and a client certificate another CA signed.
// Also HTTPS clients for them (httplib::SSLClient verifying the server against the CA).
#pragma once

#include <cstdlib>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include "scratch_dir.hpp"

namespace greensched::testing {

struct TlsFiles {
  std::string ca_cert, server_cert, server_key, client_cert, client_key;
  std::string stranger_cert, stranger_key;  // a client certificate another CA signed
};

// Runs `command` in `dir` (its output to dir/openssl.log); true when it exits 0.
inline bool run_in(const std::string& dir, const std::string& command) {
  return std::system(fmt::format("cd '{}' && {} >>openssl.log 2>&1", dir, command).c_str()) == 0;
}

// Makes the files in `dir`. Fails the test (ADD_FAILURE) and returns false when openssl is
// missing or refuses: the listener tests need it (Makefile PACKAGES names it).
inline bool make_tls_files(const ScratchDir& scratch, TlsFiles& out) {
  const std::string dir = scratch.path();
  if (!run_in(dir, "openssl version")) {
    ADD_FAILURE() << "the openssl command line is needed to make test certificates";
    return false;
  }
  scratch.write("ca.cnf",
                "[req]\ndistinguished_name = dn\nprompt = no\n[dn]\nCN = greensched test CA\n"
                "[ca]\nbasicConstraints = critical,CA:TRUE\n"
                "keyUsage = critical,keyCertSign,cRLSign\nsubjectKeyIdentifier = hash\n");
  scratch.write("server.ext",
                "subjectAltName = IP:127.0.0.1,DNS:localhost\nextendedKeyUsage = serverAuth\n"
                "keyUsage = critical,digitalSignature\n");
  scratch.write("client.ext",
                "extendedKeyUsage = clientAuth\nkeyUsage = critical,digitalSignature\n");
  const std::string key = "-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes";
  const auto ca = [&](const std::string& name) {
    return run_in(dir, fmt::format("openssl req -x509 {} -config ca.cnf -extensions ca -days 2 "
                                   "-subj /CN={} -keyout {}.key -out {}.crt",
                                   key, name, name, name));
  };
  const auto leaf = [&](const std::string& name, const std::string& by, const std::string& ext,
                        int serial) {
    return run_in(dir, fmt::format("openssl req {} -subj /CN={} -keyout {}.key -out {}.csr", key,
                                   name, name, name)) &&
           run_in(dir, fmt::format("openssl x509 -req -in {}.csr -CA {}.crt -CAkey {}.key "
                                   "-set_serial {} -days 2 -extfile {} -out {}.crt",
                                   name, by, by, serial, ext, name));
  };
  if (!(ca("ca") && ca("other-ca") && leaf("server", "ca", "server.ext", 2) &&
        leaf("client", "ca", "client.ext", 3) && leaf("stranger", "other-ca", "client.ext", 4))) {
    ADD_FAILURE() << "openssl failed; see " << scratch.file("openssl.log");
    return false;
  }
  out.ca_cert = scratch.file("ca.crt");
  out.server_cert = scratch.file("server.crt");
  out.server_key = scratch.file("server.key");
  out.client_cert = scratch.file("client.crt");
  out.client_key = scratch.file("client.key");
  out.stranger_cert = scratch.file("stranger.crt");
  out.stranger_key = scratch.file("stranger.key");
  return true;
}

// An HTTPS client of 127.0.0.1:port that verifies the server against `ca`, showing the
// client certificate `cert` (with `key`) when given.
inline std::unique_ptr<httplib::SSLClient> https_client(int port, const std::string& ca,
                                                        const std::string& cert = "",
                                                        const std::string& key = "") {
  auto c = cert.empty() ? std::make_unique<httplib::SSLClient>("127.0.0.1", port)
                        : std::make_unique<httplib::SSLClient>("127.0.0.1", port, cert, key);
  c->set_ca_cert_path(ca.c_str());
  c->enable_server_certificate_verification(true);
  c->set_connection_timeout(5, 0);
  c->set_read_timeout(10, 0);
  return c;
}

inline httplib::Headers bearer(const std::string& token) {
  return {{"Authorization", "Bearer " + token}};
}

}  // namespace greensched::testing
