// Which libfabric provider a run uses, and what this host offers. The names
// are libfabric's own ("verbs;ofi_rxm", "efa", "tcp;ofi_rxm", "shm"); the
// short "tcp" and "verbs" mean the reliable-datagram stack over them
// ("tcp;ofi_rxm", "verbs;ofi_rxm"). docs/transports.md.
//
// What omni-bench needs of a provider: a reliable-datagram endpoint
// (FI_EP_RDM) with tagged sends and receives directed at one source
// (FI_DIRECTED_RECV). It may require local memory registration (FI_MR_LOCAL)
// or a context per operation (FI_CONTEXT, FI_CONTEXT2).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/base/status.h"

struct fi_info;

namespace omnib {

// "tcp" -> "tcp;ofi_rxm", "verbs" -> "verbs;ofi_rxm"; other names unchanged.
std::string canonical_provider(const std::string& requested);

struct FiInfoDeleter {
  void operator()(fi_info* info) const;
};
using FiInfoPtr = std::unique_ptr<fi_info, FiInfoDeleter>;

// The first endpoint description fi_getinfo offers for `requested` (empty:
// any provider; FI_PROVIDER narrows it as usual). With a non-empty
// `bind_host`, the endpoint's source address is that host where the
// provider addresses by IP (tcp, verbs), else wherever the provider puts it.
// kUnavailable when nothing fits, with the reason and the fix (an RDMA
// provider on a host without the hardware names the providers there are).
Result<FiInfoPtr> find_fabric(const std::string& requested, const std::string& bind_host);

// The provider a run with `requested` would open on this host (the name of
// find_fabric's answer): what a run's configuration records.
Result<std::string> resolve_fabric_provider(const std::string& requested);

// libfabric's version at run time ("1.17"); "" when it cannot be loaded
// (fabric_library.h).
std::string libfabric_version();
// Every provider fi_getinfo lists on this host, and those of them that
// omni-bench can use (see above), each in fi_getinfo's order, once.
std::vector<std::string> offered_providers();
std::vector<std::string> usable_providers();

}  // namespace omnib
