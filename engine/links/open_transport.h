// Opens the transport a run chose (--transport, --fabric-provider): the one
// place that knows every TransportDevice implementation, above them all.
#pragma once

#include <memory>
#include <string>

#include "engine/base/status.h"
#include "engine/transport/transport_device.h"

namespace omnib {

// The libfabric provider a --transport fabric run asking for `requested`
// would open on this host, in libfabric's full name ("tcp" ->
// "tcp;ofi_rxm"; empty: libfabric's first offer). kUnavailable, with the
// reason and the fix, when this build has no libfabric or the host cannot
// open it (an RDMA provider without the hardware).
Result<std::string> fabric_provider_for(const std::string& requested);

// Opens this rank's device for `choice` and publishes its address. kUsage
// for a transport this build lacks; kUnavailable (exit 6) for a provider
// this host cannot open, with the reason and the fix.
Result<std::unique_ptr<TransportDevice>> open_transport_device(const TransportChoice& choice,
                                                                 const DeviceContext& context);

}  // namespace omnib
