// The TCP congestion control of an emulated cluster's ranks (--tcp-cc). A
// new network namespace takes the host's default, which differs between
// machines (stock kernels run cubic, some hosts bbr), and it decides how
// flows share the emulated links: at 4 workers, 4 MiB, density 1, 25 Mbit/s,
// ring reached 97-98% of its link limit under cubic and 91% under bbr
// (docs/emulation.md, "The ranks' TCP"). So the launcher sets it in every
// rank's namespace (rank_tcp.h) and the result records it.
#pragma once

#include <string>
#include <vector>

#include "engine/base/status.h"

namespace omnib {

// The sysctl that holds a namespace's default.
inline constexpr const char* kTcpCongestionSysctl = "/proc/sys/net/ipv4/tcp_congestion_control";

// What --tcp-cc takes to mean "whatever this host's default is".
inline constexpr const char* kHostTcpCongestion = "host";

// The algorithm `asked` names (kHostTcpCongestion: `host_default`), checked
// against `available` (the kernel's space-separated list). A name the
// kernel lacks is a usage error that lists the ones it has.
Result<std::string> resolve_tcp_congestion(const std::string& asked, const std::string& host_default,
                                           const std::string& available);

// The same, with this host's default and list (/proc/sys/net/ipv4/).
Result<std::string> resolve_tcp_congestion(const std::string& asked);

// The default of the namespace this process runs in; "" when unreadable.
std::string current_tcp_congestion();

}  // namespace omnib
