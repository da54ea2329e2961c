// The transport seam below LinkFactory, as Gloo splits it (device -> context
// -> pair): a TransportDevice is this rank's endpoint on one transport. It
// publishes the endpoint's address in the store when it opens, opens the
// links LinkFactory asks for (dialing a peer, or answering one), proves the
// job token on every link (link_hello.h) and turns strangers away. The
// plan logic (which links a collective needs, link numbering, self links)
// stays in LinkFactory; the Connections a device makes are the pairs.
//
// Implementations: tcp/tcp_device (sockets, the default) and
// fabric/fabric_device (libfabric reliable-datagram endpoints);
// engine/links/open_transport.h opens the one a run chose.
//
// Threads: one thread (LinkFactory's caller) calls dial() and next_link().
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "engine/auth/job_token.h"
#include "engine/store/store.h"
#include "engine/base/status.h"
#include "engine/transport/connection.h"
#include "engine/transport/link_hello.h"
#include "engine/sockets/socket_util.h"

namespace omnib {

// What the command line chose: --transport and --fabric-provider.
struct TransportChoice {
  enum class Kind { kTcp, kFabric };
  Kind kind = Kind::kTcp;
  // Fabric only: libfabric's provider name as given ("tcp;ofi_rxm", "efa");
  // empty: whatever fi_getinfo offers first (FI_PROVIDER still applies).
  std::string provider;
};

// Everything a device needs to open this rank's endpoint.
struct DeviceContext {
  Store* store = nullptr;
  int rank = 0;
  uint32_t job_id = 0;
  JobToken token = JobToken::unauthenticated();
  std::string bind_host = "127.0.0.1";  // the interface address this rank uses for links
  std::chrono::milliseconds timeout{60000};
};

// A link whose opening handshake finished. `claim` is what the hello said
// (for links this rank dialed: what it sent); `peer` the rank at the other end.
struct OpenedLink {
  bool dialed = false;
  HelloClaim claim;
  int peer = 0;
  std::unique_ptr<Connection> conn;
};

class TransportDevice {
 public:
  virtual ~TransportDevice() = default;

  // Starts opening link `claim.link_id` of plan `claim.plan` to `acceptor`
  // (the claim's dialer is this rank). The link comes back from next_link()
  // once the acceptor's challenge is answered. May block until `deadline`
  // to reach the peer; kTimeout then.
  virtual Status dial(const HelloClaim& claim, int acceptor, SteadyClock::time_point deadline) = 0;

  // Waits until a link this rank dialed or a peer's link is open, and
  // returns it; nullopt at `deadline`. Strangers are turned away inside
  // (counted, logged once), never returned. An error is a peer of the job
  // breaking the protocol, or the device failing.
  virtual Result<std::optional<OpenedLink>> next_link(SteadyClock::time_point deadline) = 0;

  // Connections turned away because they failed their hello.
  virtual uint64_t rejected_connections() const = 0;

  // One line for the run's header: the transport and how it moves bytes
  // ("tcp: kernel sockets", "fabric: provider tcp;ofi_rxm, ...").
  virtual std::string describe() const = 0;
};

// Counts a connection a device turned away and, the first time, says on
// stderr what happened ("rank R: <what>; still waiting for its peers").
void note_rejection(int rank, uint64_t& count, const std::string& what);

}  // namespace omnib
