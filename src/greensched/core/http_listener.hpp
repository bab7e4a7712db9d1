// Serving an HTTP server (httplib::Server) on a thread of its own, the way the extender, the
// dispatch service and the node monitor do: bind (port 0: any free port), run the listen loop
// in the background, stop and join. httplib's stop() does nothing until the listen loop runs,
// so the loop is known to run before start_http returns: a stop() right after cannot be lost
// (and leave the join waiting forever). Templates, so that core needs no HTTP library.
//
// The listening socket's backlog is raised to SOMAXCONN: httplib listens with a backlog of 5,
// and when more clients connect at once than that (32 schedulers' connections, a bind storm
// after a restart) Linux drops their handshakes and each waits a second for a retransmission.
// The socket takes SO_REUSEADDR (a restart may bind at once), not httplib's SO_REUSEPORT,
// which would let a second server share the port unnoticed.
#pragma once

#include <chrono>
#include <string>
#include <thread>

#include <sys/socket.h>

#include <fmt/format.h>

#include "greensched/core/status.hpp"

namespace greensched {

// Binds `server` to host:port (port 0: any free port) and serves it on a new thread (`thread`);
// returns the port, or an error naming host:port.
template <typename Server>
Result<int> start_http(Server& server, std::thread& thread, const std::string& host, int port) {
  int listening = -1;
  server.set_socket_options([&listening](auto sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    listening = sock;
  });
  int bound = -1;
  if (port == 0) {
    bound = server.bind_to_any_port(host);
  } else if (server.bind_to_port(host, port)) {
    bound = port;
  }
  if (bound <= 0) return Error{fmt::format("cannot listen on {}:{}", host, port)};
  // Listening again on a listening socket only changes its backlog.
  if (listening >= 0) ::listen(listening, SOMAXCONN);
  thread = std::thread([&server] { server.listen_after_bind(); });
  for (int i = 0; i < 50000 && !server.is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return bound;
}

// Stops `server` (when there is one) and joins its thread.
template <typename Server>
void stop_http(Server* server, std::thread& thread) {
  if (server != nullptr) server->stop();
  if (thread.joinable()) thread.join();
}

}  // namespace greensched
