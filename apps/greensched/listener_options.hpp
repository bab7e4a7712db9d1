// The flags that secure a listener, shared by `serve` and `dispatch` (--tls-cert, --tls-key,
// --client-ca, --auth-token-file, --insecure), and the check both run before they start: the
// flags agree among themselves, and the address may be listened on with them (the exposure
// rule of src/greensched/serve/listener_security.hpp). The rules live there; this file only
// names the flags and turns a refusal into exit code 2.
#pragma once

#include <string>

#include "commands.hpp"
#include "greensched/serve/listener_security.hpp"

namespace greensched::app {

// Adds the five flags to `cmd`, filling `security`; `token_help` describes --auth-token-file.
void add_listener_options(CLI::App* cmd, serve::ListenerSecurity& security,
                          const std::string& token_help);

// 0 when `host` may be listened on with `security` (after printing the --insecure warning on
// stderr), else the exit code after printing why: 2 for a refused address, flags that do not
// go together or an empty token file; 1 for a file that cannot be read.
// A refusal names `docs`, the page that explains the flags.
int check_listener(const std::string& host, const serve::ListenerSecurity& security,
                   const std::string& docs);

// The --help footer paragraph on the listener flags, with `docs` the page to read.
std::string listener_help(const std::string& docs);

}  // namespace greensched::app
