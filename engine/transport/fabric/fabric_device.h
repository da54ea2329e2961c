// The libfabric transport device (--transport fabric): this rank's one
// reliable-datagram endpoint (fabric_endpoint.h), published in the store as
// fabric-addr/<rank> = "<provider>|<address in hex>", and the opening
// handshake of its links (fabric_opener.h). Links become FabricConnections
// sharing the endpoint and its one progress thread.
//
// The device must outlive the connections it made (LinkFactory's rule):
// going, it shuts the endpoint down.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "engine/transport/fabric/fabric_endpoint.h"
#include "engine/transport/fabric/fabric_opener.h"
#include "engine/transport/transport_device.h"

namespace omnib {

class FabricDevice final : public TransportDevice {
 public:
  // Opens `provider` (fabric_provider.h's names; empty: the first offered)
  // on context.bind_host and publishes the address. kUnavailable with the
  // reason and the fix when this host cannot open it.
  static Result<std::unique_ptr<FabricDevice>> open(const std::string& provider, const DeviceContext& context);
  ~FabricDevice() override;

  Status dial(const HelloClaim& claim, int acceptor, SteadyClock::time_point deadline) override;
  Result<std::optional<OpenedLink>> next_link(SteadyClock::time_point deadline) override;
  uint64_t rejected_connections() const override { return opener_->rejected(); }
  std::string describe() const override { return "fabric: " + endpoint_->describe(); }

  FabricEndpoint& endpoint() { return *endpoint_; }

 private:
  FabricDevice(const DeviceContext& context, std::shared_ptr<FabricEndpoint> endpoint)
      : context_(context), endpoint_(std::move(endpoint)),
        opener_(std::make_shared<FabricOpener>(endpoint_, context)) {}

  Result<std::string> peer_address(int rank);

  DeviceContext context_;
  std::shared_ptr<FabricEndpoint> endpoint_;
  std::shared_ptr<FabricOpener> opener_;
  std::map<int, std::string> peer_addresses_;
};

// The store value that publishes `endpoint`, and its parsing: the provider
// and the raw address. A value from a rank on another provider is an error
// that names both.
std::string fabric_address_text(const FabricEndpoint& endpoint);
Result<std::string> parse_fabric_address(const std::string& text, const std::string& my_provider, int rank);

}  // namespace omnib
