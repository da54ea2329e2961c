#include "engine/transport/fabric/fabric_provider.h"

#include "engine/transport/fabric/fabric_library.h"

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <cstring>

namespace omnib {
namespace {

constexpr uint32_t kApiVersion = FI_VERSION(1, 9);

// Over the tcp provider, rxm sends every message above its eager limit
// (16 KiB) by rendezvous: the receiver emulates an RDMA read over the socket,
// a round trip per frame before its bytes move. Measured on emulated 1 Gbit/s
// links (4 ranks, 64 MiB, density 1), that cost omni half its throughput
// against our TCP transport; sent eagerly, a frame goes into the receive
// already posted for it (the tcp provider's dynamic receive buffers) and
// omni runs as fast as over TCP. Credits bound what is in flight, so the
// larger limit holds no more memory than the windows. rxm reads its limits
// once, at libfabric's first call, so this runs before any; it is left
// alone when the user set it, and on hosts with verbs devices (where rxm
// needs eager limit = buffer size, and the rendezvous read is real RDMA).
//
// Every link keeps a receive posted per frame of its window (and two for
// control), so a rank of a large job keeps thousands posted: more than
// rxm's default receive queue (2048), beyond which a link could never post
// its credits and the job would stall until its timeout. Its queue is
// raised to 64Ki entries unless set (some 30 MB per rank, measured on
// libfabric 1.17: a fixed cost against a window-sized stall).
void set_provider_defaults() {
  static const bool once = [] {
    std::error_code ec;
    const std::filesystem::path ib("/sys/class/infiniband");
    const bool verbs_devices = std::filesystem::exists(ib, ec) && !std::filesystem::is_empty(ib, ec);
    if (!verbs_devices) setenv("FI_OFI_RXM_EAGER_LIMIT", "1048576", 0);
    setenv("FI_OFI_RXM_RX_SIZE", "65536", 0);
    return true;
  }();
  (void)once;
}

// What omni-bench asks of a provider (see the header).
FiInfoPtr our_hints(const std::string& provider) {
  set_provider_defaults();
  FiInfoPtr hints(fi_allocinfo());
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_TAGGED | FI_SEND | FI_RECV | FI_DIRECTED_RECV;
  hints->mode = FI_CONTEXT | FI_CONTEXT2;
  hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
  // One progress thread makes every call (fabric_endpoint.h).
  hints->domain_attr->threading = FI_THREAD_DOMAIN;
  if (!provider.empty()) hints->fabric_attr->prov_name = strdup(provider.c_str());
  return hints;
}

bool addresses_by_ip(const fi_info* info) {
  return info->addr_format == FI_SOCKADDR_IN || info->addr_format == FI_SOCKADDR_IN6 ||
         info->addr_format == FI_SOCKADDR;
}

// Providers that need hardware, and what a user lacks without it.
std::string hardware_of(const std::string& provider) {
  if (provider.rfind("verbs", 0) == 0)
    return "an RDMA device (InfiniBand or RoCE through rdma-core; `ibv_devices` lists them)";
  if (provider.rfind("efa", 0) == 0) return "an AWS Elastic Fabric Adapter (EFA-enabled instance types)";
  if (provider.rfind("psm", 0) == 0 || provider.rfind("opx", 0) == 0) return "an Omni-Path or Intel Ethernet host adapter";
  if (provider.rfind("cxi", 0) == 0) return "an HPE Slingshot NIC";
  return "";
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

std::vector<std::string> provider_names(const fi_info* hints) {
  if (!fabric_library_problem().empty()) return {};
  set_provider_defaults();
  fi_info* list = nullptr;
  std::vector<std::string> names;
  if (fi_getinfo(kApiVersion, nullptr, nullptr, 0, const_cast<fi_info*>(hints), &list) != 0) return names;
  for (const fi_info* i = list; i; i = i->next) {
    std::string name = i->fabric_attr->prov_name ? i->fabric_attr->prov_name : "?";
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  fi_freeinfo(list);
  return names;
}

Status nothing_fits(const std::string& requested, const std::string& provider, int rc) {
  const std::string asked = "--fabric-provider " + requested + (requested == provider ? "" : " (" + provider + ")");
  const std::string base = provider.substr(0, provider.find(';'));
  const std::string usable = joined(usable_providers());
  if (provider.empty())
    return unavailable_error("--transport fabric: libfabric offers no reliable-datagram endpoint with tagged, "
                             "directed receives on this host (fi_getinfo: " + std::string(fi_strerror(-rc)) +
                             "); check FI_PROVIDER and `fi_info -t FI_EP_RDM`, or run with --transport tcp");
  const std::vector<std::string> all = provider_names(nullptr);
  const bool present = std::any_of(all.begin(), all.end(), [&](const std::string& n) { return n == provider; });
  const std::string hardware = hardware_of(provider);
  if (!present && !hardware.empty())
    return unavailable_error(asked + ": libfabric finds no " + base + " endpoint on this host: it needs " + hardware +
                             ", and there is none here. Providers this host offers: " + usable +
                             ". Run with --fabric-provider tcp (or --transport tcp), or on a host with the hardware "
                             "(`fi_info -p " + base + "` lists it there)");
  if (!present)
    return unavailable_error(asked + ": libfabric " + libfabric_version() +
                             " has no such provider on this host (providers here: " + joined(all) +
                             "); use one of " + usable + ", or check FI_PROVIDER and FI_PROVIDER_PATH");
  return unavailable_error(asked + " is present but offers no reliable-datagram endpoint "
                           "with tagged, directed receives (what omni-bench needs); use one of " + usable);
}

}  // namespace

void FiInfoDeleter::operator()(fi_info* info) const { fi_freeinfo(info); }

std::string canonical_provider(const std::string& requested) {
  if (requested == "tcp") return "tcp;ofi_rxm";
  if (requested == "verbs") return "verbs;ofi_rxm";
  return requested;
}

Result<FiInfoPtr> find_fabric(const std::string& requested, const std::string& bind_host) {
  if (!fabric_library_problem().empty()) return unavailable_error("--transport fabric: " + fabric_library_problem());
  const std::string provider = canonical_provider(requested);
  FiInfoPtr hints = our_hints(provider);
  fi_info* list = nullptr;
  int rc = fi_getinfo(kApiVersion, nullptr, nullptr, 0, hints.get(), &list);
  if (rc != 0) return nothing_fits(requested, provider, rc);
  // Only the first answer is used: fi_getinfo lists the best first.
  FiInfoPtr first(fi_dupinfo(list));
  fi_freeinfo(list);
  if (bind_host.empty() || !addresses_by_ip(first.get())) return first;
  // A provider that addresses by IP (tcp, verbs) binds to this rank's
  // interface; the others (efa, shm) name their endpoints themselves.
  hints = our_hints(first->fabric_attr->prov_name);
  rc = fi_getinfo(kApiVersion, bind_host.c_str(), nullptr, FI_SOURCE, hints.get(), &list);
  if (rc != 0)
    return unavailable_error("--transport fabric: provider " + std::string(first->fabric_attr->prov_name) +
                             " has no interface with the address " + bind_host +
                             " that this rank must use (set FI_TCP_IFACE or FI_VERBS_IFACE to the interface, or "
                             "OMNI_BENCH_BIND to one of its addresses)");
  first.reset(fi_dupinfo(list));
  fi_freeinfo(list);
  return first;
}

Result<std::string> resolve_fabric_provider(const std::string& requested) {
  auto info = find_fabric(requested, "");
  if (!info.is_ok()) return info.status();
  return std::string(info.value()->fabric_attr->prov_name);
}

std::string libfabric_version() {
  if (!fabric_library_problem().empty()) return "";
  set_provider_defaults();
  const uint32_t v = fi_version();
  return std::to_string(FI_MAJOR(v)) + "." + std::to_string(FI_MINOR(v));
}

std::vector<std::string> offered_providers() { return provider_names(nullptr); }

std::vector<std::string> usable_providers() {
  if (!fabric_library_problem().empty()) return {};
  FiInfoPtr hints = our_hints("");
  return provider_names(hints.get());
}

}  // namespace omnib
