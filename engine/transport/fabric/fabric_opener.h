// The opening handshake of fabric links (docs/wire-format.md, "Fabric
// links"), run on the endpoint's progress thread. A reliable-datagram
// endpoint has no connections to accept, so a dialer first knocks: it sends
// its own address and a connection id, and the acceptor answers at that
// address with the challenge TCP would send (plus its own connection id).
// The dialer's hello proves the job token over the challenge's nonce, as on
// TCP; only then does the acceptor make a link.
//
// The opener dials and hands out the links that opened; the acceptor's side
// is fabric_acceptor.h. Every receive past the knock is directed at one
// address, so once a link is open only its peer can reach it.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <unordered_set>

#include "engine/transport/fabric/fabric_acceptor.h"
#include "engine/transport/fabric/fabric_address_book.h"
#include "engine/transport/fabric/fabric_endpoint.h"
#include "engine/transport/transport_device.h"

namespace omnib {

class FabricOpener final : public FabricOpOwner, public std::enable_shared_from_this<FabricOpener> {
 public:
  static constexpr size_t kMaxPendingHellos = FabricAcceptor::kMaxPendingHellos;
  enum OpKind : uint32_t { kKnockRecv = 1, kChallengeRecv, kHelloRecv, kKnockSend, kChallengeSend, kHelloSend };
  using Failed = std::function<void(const std::string&)>;

  FabricOpener(std::shared_ptr<FabricEndpoint> endpoint, const DeviceContext& context);

  // Posts the knock receives and starts expiring hellos (once, any thread).
  void start();
  // Queues the dial of `claim` to `acceptor`, whose endpoint is `address`.
  void dial(const HelloClaim& claim, int acceptor, const std::string& address);
  // As TransportDevice::next_link.
  Result<std::optional<OpenedLink>> next_link(SteadyClock::time_point deadline);
  uint64_t rejected() const;

  // The progress thread.
  void on_done(FabricOp& op, size_t len, uint64_t tag) override;
  void on_failed(FabricOp& op, bool canceled, const std::string& why) override;
  void pump() override;

  // ---- For the acceptor (the progress thread).
  const DeviceContext& context() const { return context_; }
  const std::shared_ptr<FabricEndpoint>& endpoint() const { return ep_; }
  FabricAddressBook& addresses() { return addresses_; }
  uint32_t new_conn();
  // Sends `bytes` to `addr` from a slot (ops of `kind`, with `arg`).
  void send_bytes(const std::string& bytes, fi_addr_t addr, uint64_t tag, uint32_t kind, uint64_t arg, Failed failed);
  // Posts a receive of up to a slot's bytes from `addr` (ops of `kind`,
  // `arg`); `posted`, when set, is told the op once the provider took it.
  void receive(fi_addr_t addr, uint64_t tag, uint64_t ignore, uint32_t kind, uint64_t arg, Failed failed,
               std::function<void(FabricOp*)> posted = nullptr);
  // Counts and (the first time) logs a stranger turned away.
  void reject(const std::string& why);
  void link_ready(OpenedLink link);

 private:
  struct Dialing {
    HelloClaim claim;
    int acceptor;
    fi_addr_t addr;
  };
  struct Retry {
    std::function<ssize_t()> attempt;
    Failed failed;
  };

  void receive_knock();
  void start_dial(const HelloClaim& claim, int acceptor, const std::string& address);
  void on_challenge(FabricOp& op, size_t len);
  // The dial of `conn` failed (a knock, challenge or hello op).
  void dial_failed(uint32_t conn, const std::string& why);
  // Runs `attempt` now, and again after progress while the provider says
  // -FI_EAGAIN; another error goes to `failed`.
  void post_or_later(std::function<ssize_t()> attempt, Failed failed);
  void fail(Status why);

  const std::shared_ptr<FabricEndpoint> ep_;
  const DeviceContext context_;
  std::mt19937_64 random_{std::random_device{}()};
  std::unordered_set<uint32_t> conns_;
  std::map<uint32_t, Dialing> dialing_;
  FabricAddressBook addresses_;
  FabricAcceptor acceptor_;
  std::deque<Retry> again_;

  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::deque<OpenedLink> ready_;
  Status failure_;
  uint64_t rejected_ = 0;
};

}  // namespace omnib
