#include "tools/record/environment_info.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <fstream>

#include "tools/build_info.h"
#include "tools/git_revision.h"

#if OMNIB_WITH_GLOO
#include <gloo/config.h>
#endif
#if OMNIB_WITH_NCCL
#include <nccl.h>
#endif
#if OMNIB_WITH_LIBFABRIC
#include <rdma/fabric.h>

#include "engine/transport/fabric/fabric_provider.h"
#endif
#include "engine/omni/settings/omni_settings.h"

namespace omnib {

std::string host_name() {
  char buf[256] = {0};
  gethostname(buf, sizeof(buf) - 1);
  return buf;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    while (!name.empty() && (name.back() == ' ' || name.back() == '\t')) name.pop_back();
    if (name != "model name" && name != "cpu model") continue;
    const size_t value = line.find_first_not_of(" \t", colon + 1);
    if (value != std::string::npos) return line.substr(value);
  }
  return "unknown";
}

std::string utc_timestamp() {
  std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buf;
}

nlohmann::json build_environment() {
  nlohmann::json j;
  j["version"] = OMNIB_VERSION;
  j["git_revision"] = OMNIB_GIT_REVISION;
  j["build_type"] = OMNIB_BUILD_TYPE;
  j["compiler"] = OMNIB_COMPILER;
  utsname u{};
  uname(&u);
  j["os"] = std::string(u.sysname) + " " + u.release + " " + u.machine;
  j["cpus"] = sysconf(_SC_NPROCESSORS_ONLN);
  j["timestamp"] = utc_timestamp();
  nlohmann::json backends;
#if OMNIB_WITH_GLOO
  backends["gloo"] = std::to_string(GLOO_VERSION_MAJOR) + "." + std::to_string(GLOO_VERSION_MINOR) + "." +
                     std::to_string(GLOO_VERSION_PATCH);
#else
  backends["gloo"] = nullptr;
#endif
#if OMNIB_WITH_NCCL
  backends["nccl"] = std::to_string(NCCL_MAJOR) + "." + std::to_string(NCCL_MINOR) + "." + std::to_string(NCCL_PATCH);
#else
  backends["nccl"] = nullptr;
#endif
#if OMNIB_WITH_LIBFABRIC
  backends["libfabric"] = std::to_string(FI_MAJOR_VERSION) + "." + std::to_string(FI_MINOR_VERSION);
#else
  backends["libfabric"] = nullptr;
#endif
  backends["cuda"] = OMNIB_WITH_CUDA ? nlohmann::json(true) : nlohmann::json(nullptr);
  j["backends"] = backends;
#if OMNIB_WITH_LIBFABRIC
  // What --transport fabric could use here (docs/transports.md).
  // A host without libfabric runs everything else: its version is then null.
  const std::string fabric_version = libfabric_version();
  j["libfabric"] = {{"version", fabric_version.empty() ? nlohmann::json(nullptr) : nlohmann::json(fabric_version)},
                    {"providers", offered_providers()},
                    {"usable_providers", usable_providers()}};
#else
  j["libfabric"] = nullptr;
#endif
  // The network settings the baselines and libfabric read: NCCL picks its
  // own network unless NCCL_NET names one.
  nlohmann::json network = nlohmann::json::object();
  for (const char* var : {"NCCL_NET", "NCCL_SOCKET_IFNAME", "NCCL_IB_HCA", "FI_PROVIDER", "FI_TCP_IFACE",
                          "FI_VERBS_IFACE", "FI_EFA_IFACE", "FI_OFI_RXM_EAGER_LIMIT",
                          "FI_OFI_RXM_RX_SIZE"}) {
    const char* value = std::getenv(var);
    network[var] = value ? nlohmann::json(value) : nlohmann::json(nullptr);
  }
  j["network_environment"] = network;
  // The engine's own knobs (engine/omni/direct_lanes.h).
  const char* lanes = std::getenv(kDirectLanesVar);
  j["engine_environment"] = {{kDirectLanesVar, lanes ? nlohmann::json(lanes) : nlohmann::json(nullptr)}};
  return j;
}

}  // namespace omnib
