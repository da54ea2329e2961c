// Sockets joined over loopback for transport tests: two TcpConnections, or
// one TcpConnection and the raw descriptor of its peer (to write bytes no
// TcpConnection would).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <utility>

#include "engine/sockets/socket_util.h"
#include "engine/transport/tcp/tcp_connection.h"

namespace omnib {

// Two connected, configured sockets: {dialer, acceptor}.
inline std::pair<int, int> connected_sockets() {
  auto lfd = listen_on({"127.0.0.1", 0});
  EXPECT_TRUE(lfd.is_ok());
  auto addr = local_address(lfd.value());
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  auto cfd = dial(addr.value(), deadline);
  auto sfd = accept_before(lfd.value(), deadline);
  close(lfd.value());
  EXPECT_TRUE(configure_stream_socket(cfd.value()).is_ok());
  EXPECT_TRUE(configure_stream_socket(sfd.value()).is_ok());
  return {cfd.value(), sfd.value()};
}

// Two TcpConnections: `a` is rank 0's end (its peer is rank 1), `b` rank 1's.
struct TcpPair {
  std::unique_ptr<TcpConnection> a, b;
  TcpPair(uint32_t job_a, uint32_t job_b, std::chrono::milliseconds timeout) {
    auto [cfd, sfd] = connected_sockets();
    a = std::make_unique<TcpConnection>(cfd, 1, job_a, timeout);
    b = std::make_unique<TcpConnection>(sfd, 0, job_b, timeout);
  }
};

// A TcpConnection (rank 1's end) and the raw socket of rank 0 facing it.
struct RawPeer {
  int raw = -1;
  std::unique_ptr<TcpConnection> conn;
  RawPeer(uint32_t job, std::chrono::milliseconds timeout) {
    auto [cfd, sfd] = connected_sockets();
    raw = cfd;
    conn = std::make_unique<TcpConnection>(sfd, 0, job, timeout);
  }
  ~RawPeer() { close(raw); }
  RawPeer(const RawPeer&) = delete;
  RawPeer& operator=(const RawPeer&) = delete;
};

}  // namespace omnib
