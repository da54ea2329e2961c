#include "engine/links/open_transport.h"

#include "engine/build_features.h"
#include "engine/transport/tcp/tcp_device.h"
#if OMNIB_WITH_LIBFABRIC
#include "engine/transport/fabric/fabric_device.h"
#include "engine/transport/fabric/fabric_provider.h"
#endif

namespace omnib {
namespace {

[[maybe_unused]] Status no_fabric_in_this_build() {
  return unavailable_error(
      "--transport fabric: this build has no libfabric; install libfabric-dev, reconfigure with "
      "-DOMNIB_USE_LIBFABRIC=ON and rebuild, or run with --transport tcp");
}

}  // namespace

Result<std::string> fabric_provider_for(const std::string& requested) {
#if OMNIB_WITH_LIBFABRIC
  return resolve_fabric_provider(requested);
#else
  return no_fabric_in_this_build();
#endif
}

Result<std::unique_ptr<TransportDevice>> open_transport_device(const TransportChoice& choice,
                                                                 const DeviceContext& context) {
  if (choice.kind == TransportChoice::Kind::kTcp) {
    auto d = TcpDevice::open(context);
    if (!d.is_ok()) return d.status();
    return std::unique_ptr<TransportDevice>(d.take());
  }
#if OMNIB_WITH_LIBFABRIC
  auto d = FabricDevice::open(choice.provider, context);
  if (!d.is_ok()) return d.status();
  return std::unique_ptr<TransportDevice>(d.take());
#else
  return no_fabric_in_this_build();
#endif
}

}  // namespace omnib
