// The accepting side of the fabric links' opening handshake (docs/wire-format.md,
// "Fabric links"): a knock gets the challenge TCP would send, at the
// address it names, and a hello that proves the job token over the
// challenge's nonce becomes a link. Anyone may knock: a knock or hello that
// fails (another job, random bytes, a bad proof, silence past the timeout)
// is dropped, counted and logged once, never fatal; at most
// kMaxPendingHellos knocks wait for their hello at once (the oldest is
// pushed out).
//
// Threads: the endpoint's progress thread only.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>

#include "engine/auth/job_token.h"
#include "engine/sockets/socket_util.h"
#include "engine/transport/fabric/fabric_endpoint.h"

namespace omnib {

class FabricOpener;

class FabricAcceptor {
 public:
  static constexpr size_t kMaxPendingHellos = 1024;

  explicit FabricAcceptor(FabricOpener& opener) : opener_(opener) {}

  void on_knock(FabricOp& op, size_t len);
  void on_hello(FabricOp& op, size_t len);
  // The hello receive of knock `conn` failed (or was canceled).
  void hello_failed(uint32_t conn, bool canceled, const std::string& why);
  // The challenge to knock `conn` left, or could not.
  void challenge_sent(uint32_t conn);
  void challenge_failed(uint32_t conn, const std::string& why);
  // Turns away the knocks whose hello is overdue.
  void expire_pending();

 private:
  struct Pending {
    std::string address;  // the knock's, as the address table knows it
    fi_addr_t addr;
    Nonce nonce;
    uint32_t dialer_conn;
    SteadyClock::time_point expires;
  };

  // Answers a knock from `address` with a challenge.
  void challenge(const std::string& address, fi_addr_t addr, uint32_t dialer_conn, const Nonce& nonce);
  void reject_pending(uint32_t conn, const std::string& why);

  FabricOpener& opener_;
  std::map<uint32_t, Pending> pending_;
  std::deque<uint32_t> pending_order_;
  std::map<uint32_t, FabricOp*> hello_receives_;       // posted, to cancel when a knock is turned away
  std::map<uint64_t, std::string> challenge_targets_;  // challenge sends out: the address each holds
};

}  // namespace omnib
