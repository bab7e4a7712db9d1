#include "listener_options.hpp"

#include <pthread.h>

#include <cstdio>

#include <fmt/format.h>

#include "command_util.hpp"
#include "greensched/core/text_file.hpp"

namespace greensched::app {

void add_listener_options(CLI::App* cmd, serve::ListenerSecurity& s,
                          const std::string& token_help) {
  cmd->add_option("--tls-cert", s.tls_cert,
                  "PEM certificate (chain) to serve HTTPS with (with --tls-key)");
  cmd->add_option("--tls-key", s.tls_key, "PEM private key of --tls-cert");
  cmd->add_option("--client-ca", s.client_ca,
                  "PEM CA: clients must show a certificate it signed (mutual TLS; /healthz "
                  "excepted)");
  cmd->add_option("--auth-token-file", s.token_file, token_help);
  cmd->add_flag("--insecure", s.insecure,
                "listen on a non-loopback address without TLS and authentication (prints a "
                "warning)");
}

int check_listener(const std::string& host, const serve::ListenerSecurity& s,
                   const std::string& docs) {
  if (Status ok = serve::check_listener_options(s); !ok.ok()) {
    return fail(ok.message(),
                ok.code() == ErrorCode::kInvalidInput ? kExitUsage : exit_code(ok.code()));
  }
  auto exposure = serve::check_exposure(host, s);
  if (!exposure.ok()) return fail(fmt::format("{} (see {})", exposure.error(), docs), kExitUsage);
  if (!exposure.value().empty()) fmt::print(stderr, "warning: {}\n", exposure.value());
  return 0;
}

int check_listen(const std::string& listen, const std::string& example,
                 const serve::ListenerSecurity& security, const std::string& docs,
                 std::string& host, int& port) {
  if (!serve::split_listen_address(listen, host, port)) {
    return fail(fmt::format("--listen {}: expected HOST:PORT, e.g. {}", listen, example),
                kExitUsage);
  }
  return check_listener(host, security, docs);
}

void add_port_file_option(CLI::App* cmd, std::string& port_file) {
  cmd->add_option("--port-file", port_file, "write the port listened on to this file")
      ->type_name("FILE");
}

int write_port_file(const std::string& port_file, int port) {
  if (port_file.empty()) return 0;
  if (Status s = write_text_file_atomic(port_file, fmt::format("{}\n", port)); !s.ok()) {
    return fail(fmt::format("--port-file: {}", s.message()), exit_code(s.code()));
  }
  return 0;
}

sigset_t block_stop_signals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

int wait_for_stop_signal(const sigset_t& signals, const std::string& name, bool quiet) {
  int sig = 0;
  sigwait(&signals, &sig);
  if (!quiet) fmt::print(stderr, "{}: signal {}, stopping\n", name, sig);
  return sig;
}

std::string listener_help(const std::string& docs) {
  return fmt::format(
      "Listens on loopback by default. Any other address needs TLS (--tls-cert, --tls-key) and\n"
      "authentication (--auth-token-file: clients send Authorization: Bearer <token>; or\n"
      "--client-ca: clients show a certificate the CA signed), else it is refused (exit 2)\n"
      "unless --insecure is given. GET /healthz needs neither. The token file is re-read\n"
      "within a second of a change (rotate by replacing its content). See {}.",
      docs);
}

}  // namespace greensched::app
