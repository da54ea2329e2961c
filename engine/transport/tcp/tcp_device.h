// The TCP transport device: this rank listens on one port (published in the
// store as addr/<rank>), dials its peers' ports, and opens every link with
// the challenge and hello of link_hello.h. Links become TcpConnections,
// driven by the process's IoLoop.
//
// Anyone may connect to the port: a connection that fails its hello
// (another job, random bytes, a bad proof, silence past the timeout) is
// closed and counted, logged once on stderr, and never returned. Hellos are
// read concurrently, so a silent stranger holds up nobody.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/transport/transport_device.h"

namespace omnib {

class TcpDevice final : public TransportDevice {
 public:
  // Listens on context.bind_host (port 0) and publishes addr/<rank>.
  static Result<std::unique_ptr<TcpDevice>> open(const DeviceContext& context);
  ~TcpDevice() override;

  Status dial(const HelloClaim& claim, int acceptor, SteadyClock::time_point deadline) override;
  Result<std::optional<OpenedLink>> next_link(SteadyClock::time_point deadline) override;
  uint64_t rejected_connections() const override { return rejected_; }
  std::string describe() const override { return "tcp (kernel sockets, one network thread per rank)"; }

  // At most this many accepted connections wait for their hello at once; a
  // newer one pushes out the oldest (real peers answer within milliseconds).
  static constexpr size_t kMaxPendingHellos = 1024;

 private:
  // An accepted connection whose hello has not been read yet. Kept across
  // plans: a peer may already be dialing for the next one.
  struct PendingHello {
    int fd;
    Nonce nonce;
    OpeningFrameReader reader;
    SteadyClock::time_point expires;
  };
  // A link this rank dials, waiting for the acceptor's challenge.
  struct Outgoing {
    HelloClaim claim;
    int peer;
    int fd;
    OpeningFrameReader reader;
  };

  TcpDevice(const DeviceContext& context, int listen_fd) : context_(context), listen_fd_(listen_fd) {}

  Result<int> dial_peer(int acceptor, SteadyClock::time_point deadline);
  // Accepts every waiting connection and sends it a challenge. False when
  // accepting failed for another reason than "none left" (out of descriptors).
  bool accept_pending();
  // Reads the challenge once it is all there and answers with the hello;
  // then the link is ready and out.fd is -1.
  Status answer_challenge(Outgoing& out);
  // Reads what has come of p's hello. True when p is finished: its
  // descriptor is closed (a stranger) or handed on (a ready link).
  bool read_hello(PendingHello& p);
  // Closes, counts and (the first time) logs a connection that failed its hello.
  void reject(int fd, const std::string& why);

  DeviceContext context_;
  int listen_fd_;
  std::map<int, SocketAddress> peer_addresses_;
  std::vector<Outgoing> outgoing_;
  std::deque<PendingHello> pending_;
  std::deque<OpenedLink> ready_;
  SteadyClock::time_point listen_paused_until_ = SteadyClock::time_point::min();
  uint64_t rejected_ = 0;
};

}  // namespace omnib
