// Fabric links for tests without a store: two endpoints over libfabric's
// tcp provider on loopback joined into a FabricConnection pair, and raw
// messages sent straight from an endpoint, for tests that play a peer which
// breaks the protocol or a stranger.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "engine/transport/fabric/fabric_connection.h"
#include "engine/transport/fabric/fabric_endpoint.h"

namespace omnib::testing {

// The provider the fabric tests run on (CI has no RDMA hardware).
constexpr const char* kTestProvider = "tcp";

// An endpoint on loopback, or a test failure.
std::shared_ptr<FabricEndpoint> open_test_endpoint();

struct FabricPair {
  std::shared_ptr<FabricEndpoint> ep_a, ep_b;
  std::unique_ptr<FabricConnection> a, b;  // a's peer is rank 1, b's rank 0
  fi_addr_t a_to_b = 0, b_to_a = 0;        // each endpoint's handle of the other
  static constexpr uint32_t kConnA = 0x1111, kConnB = 0x2222;
  ~FabricPair();
};

// Joins two fresh endpoints: a sends with job `job_a`, b expects `job_b`.
// `local_registration`: both behave as if the provider needed FI_MR_LOCAL.
// Without `with_b`, b's end is left to the test (raw messages from ep_b).
std::unique_ptr<FabricPair> make_fabric_pair(uint32_t job_a, uint32_t job_b, std::chrono::milliseconds timeout,
                                             bool local_registration = false, bool with_b = true);

// Sends `bytes` from `ep` to `to` with `tag`, and waits until it is sent.
bool send_raw_fabric(FabricEndpoint& ep, fi_addr_t to, uint64_t tag, const std::string& bytes);

// Receives one message with `tag` from `from` (up to 4096 bytes), or
// nullopt after `limit`.
std::optional<std::string> receive_raw_fabric(FabricEndpoint& ep, fi_addr_t from, uint64_t tag,
                                              std::chrono::milliseconds limit);

// Adds `address` to `ep`'s table.
fi_addr_t add_peer(FabricEndpoint& ep, const std::string& address);

}  // namespace omnib::testing
