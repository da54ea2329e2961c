// Whether this process can build an emulated cluster: the privileges to
// create namespaces, links and qdiscs, and the iproute2 tools that do it.
#pragma once

#include "engine/base/status.h"

namespace omnib {

// kUnavailable (exit 6) saying what is missing and how to get it.
Status check_emulation_requirements();

// Whether the effective capability set holds CAP_NET_ADMIN and CAP_SYS_ADMIN
// (creating links needs the first, `ip netns add` mounts and so needs the second).
bool has_net_admin_privileges();

}  // namespace omnib
