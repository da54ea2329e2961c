#include "tools/net/net_requirements.h"

#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "tools/net/command_runner.h"

namespace omnib {
namespace {

bool has_capability(const __user_cap_data_struct (&data)[2], int cap) {
  return (data[cap / 32].effective & (1u << (cap % 32))) != 0;
}

}  // namespace

bool has_net_admin_privileges() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  // glibc has no capget wrapper without libcap; the raw call is stable ABI.
  if (syscall(SYS_capget, &header, data) != 0) return geteuid() == 0;
  return has_capability(data, CAP_NET_ADMIN) && has_capability(data, CAP_SYS_ADMIN);
}

Status check_emulation_requirements() {
  if (!has_net_admin_privileges())
    return unavailable_error(
        "--net emulate creates network namespaces, veth links and tc qdiscs, which needs CAP_NET_ADMIN and "
        "CAP_SYS_ADMIN: run omni-bench as root (e.g. with sudo), or in a container granted both capabilities");
  for (const char* tool : {"ip", "tc"})
    if (find_tool(tool).empty())
      return unavailable_error(std::string("--net emulate needs '") + tool +
                               "', which is not installed: install iproute2 (apt-get install iproute2)");
  return Status::ok();
}

}  // namespace omnib
