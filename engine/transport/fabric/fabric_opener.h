// The opening handshake of fabric links (docs/wire-format.md, "Fabric
// links"), run on the endpoint's progress thread. A reliable-datagram
// endpoint has no connections to accept, so a dialer first knocks: it sends
// its own address and a connection id, and the acceptor answers at that
// address with the challenge TCP would send (plus its own connection id).
// The dialer's hello proves the job token over the challenge's nonce, as on
// TCP; only then does the acceptor make a link.
//
// Strangers: anyone may knock. A knock or hello that fails (another job,
// random bytes, a bad proof, silence past the timeout) is dropped, counted
// and logged once, never fatal; at most kMaxPendingHellos knocks wait for
// their hello at once (the oldest is pushed out). Every receive past the
// knock is directed at one address, so once a link is open only its peer
// can reach it.
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

#include "engine/transport/fabric/fabric_endpoint.h"
#include "engine/transport/transport_device.h"

namespace omnib {

class FabricOpener final : public FabricOpOwner, public std::enable_shared_from_this<FabricOpener> {
 public:
  static constexpr size_t kMaxPendingHellos = 1024;

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

 private:
  enum OpKind : uint32_t { kKnockRecv = 1, kChallengeRecv, kHelloRecv, kKnockSend, kChallengeSend, kHelloSend };
  struct Dialing {
    HelloClaim claim;
    int acceptor;
    fi_addr_t addr;
  };
  struct Pending {
    std::string address;  // the knock's, as the address table knows it
    fi_addr_t addr;
    Nonce nonce;
    uint32_t dialer_conn;
    SteadyClock::time_point expires;
  };
  struct KnownAddress {
    fi_addr_t addr;
    int refs = 0;
    bool of_the_job = false;  // a rank's: kept for good
  };

  // All on the progress thread.
  void post_knock_receive(SlotPool::Slot slot);
  void start_dial(const HelloClaim& claim, int acceptor, const std::string& address);
  void on_knock(FabricOp& op, size_t len);
  void on_challenge(FabricOp& op, size_t len);
  void on_hello(FabricOp& op, size_t len);
  // Runs `attempt` now, and again after progress while the provider says
  // -FI_EAGAIN; another error goes to `failed`.
  void post_or_later(std::function<ssize_t()> attempt, std::function<void(const std::string&)> failed);
  // Sends `bytes` to `addr` from a slot (ops of `kind`, with `arg`).
  void send_bytes(const std::string& bytes, fi_addr_t addr, uint64_t tag, uint32_t kind, uint64_t arg,
                  std::function<void(const std::string&)> failed);
  // Posts a receive of up to a slot's bytes from `addr` (ops of `kind`, `arg`).
  void receive(fi_addr_t addr, uint64_t tag, uint64_t ignore, uint32_t kind, uint64_t arg,
               std::function<void(const std::string&)> failed);
  Result<fi_addr_t> hold_address(const std::string& address, bool of_the_job);
  void release_address(const std::string& address);
  uint32_t new_conn();
  void reject_pending(uint32_t conn, const std::string& why);
  void reject(const std::string& why);
  void expire_pending();
  void fail(Status why);
  void link_ready(OpenedLink link);

  const std::shared_ptr<FabricEndpoint> ep_;
  const DeviceContext context_;
  std::mt19937_64 random_{std::random_device{}()};
  std::unordered_set<uint32_t> conns_;
  std::map<uint32_t, Dialing> dialing_;
  std::map<uint32_t, Pending> pending_;
  std::deque<uint32_t> pending_order_;
  std::map<std::string, KnownAddress> addresses_;
  std::map<uint32_t, FabricOp*> hello_receives_;  // posted, to cancel when a knock is turned away
  std::map<uint64_t, std::string> challenge_targets_;  // challenge sends out: the address each holds
  struct Retry {
    std::function<ssize_t()> attempt;
    std::function<void(const std::string&)> failed;
  };
  std::deque<Retry> again_;

  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::deque<OpenedLink> ready_;
  Status failure_;
  uint64_t rejected_ = 0;
};

}  // namespace omnib
