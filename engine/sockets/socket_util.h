// Small POSIX socket helpers shared by the TCP transport and the store.
//
// Every wait takes a deadline, not a per-call timeout: a peer that trickles
// one byte at a time cannot stretch a wait past it. The descriptors these
// helpers return are non-blocking; read and write them with read_all and
// write_all below (or the libuv loop of the store server).
#pragma once

#include <poll.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "engine/base/status.h"

namespace omnib {

using SteadyClock = std::chrono::steady_clock;

// The longest wait any caller may ask for (-T): a day. Longer ones are
// usage errors; the engine also saturates deadlines, so nothing overflows.
constexpr std::chrono::seconds kMaxWaitTimeout{24 * 3600};

// now + timeout, saturating instead of overflowing.
SteadyClock::time_point deadline_after(std::chrono::milliseconds timeout);

struct SocketAddress {
  std::string host;
  uint16_t port = 0;
  std::string to_string() const { return host + ":" + std::to_string(port); }
};

// Parses "host:port".
Result<SocketAddress> parse_socket_address(const std::string& text);

// Non-blocking listening socket bound to host:port (port 0 picks a free one).
// Returns fd.
Result<int> listen_on(const SocketAddress& where, int backlog = 128);
// The address a listening or connected socket is bound to.
Result<SocketAddress> local_address(int fd);
// Connects, retrying refused connections until `deadline` (the peer may not be
// listening yet). Returns the connected, non-blocking fd.
Result<int> dial(const SocketAddress& to, SteadyClock::time_point deadline);
// Accepts one connection, waiting at most until `deadline`. Returns a
// non-blocking fd.
Result<int> accept_before(int listen_fd, SteadyClock::time_point deadline);

// TCP_NODELAY and large buffers.
Status configure_stream_socket(int fd);

// Waits until `fd` is ready for `events` (POLLIN, POLLOUT). kTimeout once
// `deadline` passes; `what` names the link in messages.
Status wait_ready(int fd, short events, SteadyClock::time_point deadline, const std::string& what);

// Write or read exactly n bytes before `deadline`. A closed peer is
// kUnavailable, the deadline kTimeout. `what` names the link in messages.
Status write_all(int fd, const void* data, size_t n, SteadyClock::time_point deadline, const std::string& what);
Status read_all(int fd, void* data, size_t n, SteadyClock::time_point deadline, const std::string& what);

// Raises this process's soft descriptor limit to its hard limit, so that a
// store serving a thousand ranks is not stopped by a default of 1024.
void raise_descriptor_limit();

// The local address this host would use to reach `remote_host` (for choosing
// which interface to listen on under an external launcher).
Result<std::string> route_source_address(const std::string& remote_host);

}  // namespace omnib
