// What the three servers (`serve`, `dispatch`, `forecast serve`) share around their listener:
// the flags that secure it (--tls-cert, --tls-key, --client-ca, --auth-token-file, --insecure)
// and the check each runs before it starts (--listen is HOST:PORT, the flags agree among
// themselves, and the address may be listened on with them: the exposure rule of
// src/greensched/serve/listener_security.hpp, whose refusals become exit code 2); --port-file
// and its atomic write once the port is bound; and the stop signals (SIGINT, SIGTERM), blocked
// before any thread starts and waited for while the server runs.
#pragma once

#include <csignal>
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

// 0 when `listen` is HOST:PORT (filling `host` and `port`) and check_listener accepts it, else
// the exit code after printing why; `example` is a valid --listen shown in the refusal.
int check_listen(const std::string& listen, const std::string& example,
                 const serve::ListenerSecurity& security, const std::string& docs,
                 std::string& host, int& port);

// Adds --port-file, filling `port_file`.
void add_port_file_option(CLI::App* cmd, std::string& port_file);

// Writes `port` and a newline to `port_file` atomically (so a watcher never reads half a
// port); nothing when it is empty. 0, else the exit code after printing why.
int write_port_file(const std::string& port_file, int port);

// Blocks SIGINT and SIGTERM in the calling thread, and so in the threads it starts later (call
// it before any): they are then taken by wait_for_stop_signal. Returns the set.
sigset_t block_stop_signals();

// Waits for SIGINT or SIGTERM (blocked by block_stop_signals), then, unless `quiet`, prints
// "<name>: signal N, stopping" on stderr. Returns the signal.
int wait_for_stop_signal(const sigset_t& signals, const std::string& name, bool quiet);

// The --help footer paragraph on the listener flags, with `docs` the page to read.
std::string listener_help(const std::string& docs);

}  // namespace greensched::app
