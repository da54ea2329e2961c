// Small POSIX socket helpers shared by the TCP transport and the store.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "engine/status.h"

namespace omnib {

struct SocketAddress {
  std::string host;
  uint16_t port = 0;
  std::string to_string() const { return host + ":" + std::to_string(port); }
};

// Parses "host:port".
Result<SocketAddress> parse_socket_address(const std::string& text);

// Listening socket bound to host:port (port 0 picks a free one). Returns fd.
Result<int> listen_on(const SocketAddress& where, int backlog = 128);
// The address a listening or connected socket is bound to.
Result<SocketAddress> local_address(int fd);
// Connects, retrying refused connections until `deadline` (the peer may not be
// listening yet). Returns the connected fd.
Result<int> dial(const SocketAddress& to, std::chrono::steady_clock::time_point deadline);
// Accepts one connection, waiting at most until `deadline`.
Result<int> accept_before(int listen_fd, std::chrono::steady_clock::time_point deadline);

// Per-call send/receive timeouts, TCP_NODELAY and large buffers.
Status configure_stream_socket(int fd, std::chrono::milliseconds timeout);

// Write or read exactly n bytes, honouring the socket timeouts. `what` names
// the link in error messages.
Status write_all(int fd, const void* data, size_t n, const std::string& what);
Status read_all(int fd, void* data, size_t n, const std::string& what);

// The local address this host would use to reach `remote_host` (for choosing
// which interface to listen on under an external launcher).
Result<std::string> route_source_address(const std::string& remote_host);

}  // namespace omnib
