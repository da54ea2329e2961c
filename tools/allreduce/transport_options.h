// --transport and --fabric-provider: how our own algorithms (omni, ps, ring,
// tree, allgather, the SparCML pair, oktopk) move bytes between ranks, their
// CLI binding, their checks, and how a configuration records them.
// docs/transports.md.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "engine/base/status.h"
#include "engine/transport/transport_device.h"

namespace omnib {

struct TransportOptions {
  std::string transport = "tcp";  // tcp | fabric
  std::string provider;           // --fabric-provider; empty: libfabric's first offer
};

void bind_transport_options(CLI::App& cmd, TransportOptions& o);

// Checks the options and, for fabric, finds the provider this host would
// open (named in full: "tcp" -> "tcp;ofi_rxm"). kUsage for a bad
// combination; kUnavailable (exit 6) when this build or host cannot run it,
// with the reason and the fix. `emulate`: --net emulate (where shared
// memory would bypass the emulated links).
Result<TransportChoice> resolve_transport(const TransportOptions& o, bool emulate);

// The configuration's `transport` identity value: "tcp", or "fabric/" and
// the provider ("fabric/tcp;ofi_rxm"); back to command-line arguments with
// transport_args (tools/config/transport_identity.h).
std::string transport_identity(const TransportChoice& choice);

}  // namespace omnib
