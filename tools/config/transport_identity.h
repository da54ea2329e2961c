// The `transport` field of a configuration (part of its identity): "tcp",
// or "fabric/" and the libfabric provider that opened ("fabric/tcp;ofi_rxm");
// and the command-line arguments that run it again. Plain strings, so that
// the configuration's readers need nothing of the transports themselves.
// docs/json-schema.md.
#pragma once

#include <string>
#include <vector>

namespace omnib {

std::string fabric_transport_identity(const std::string& provider);

// "tcp" -> none; "fabric/P" -> --transport fabric --fabric-provider P;
// anything else -> --transport IDENTITY (which the CLI then refuses).
std::vector<std::string> transport_args(const std::string& identity);

}  // namespace omnib
