// How every emulated rank's TCP runs: sysctls of its network namespace,
// written when the cluster is built (emulated_network.h) and recorded in
// the result (tcp_cc, tcp_idle_restart).
//
// Idle restart is off by default. Algorithms run interleaved over the same
// connections, so each one's links sit idle while the others run; with the
// kernel's default (tcp_slow_start_after_idle=1) every call then restarted
// from slow start, all senders in step, and overran the switch ports: at 4
// workers, 4 MiB, density 1, 25 Mbit/s, cubic, sparcml-split reached 90% of
// its link limit alone and 72% measured beside tree (docs/emulation.md,
// "The ranks' TCP"). A rank's result must not depend on its neighbours.
#pragma once

#include <string>
#include <vector>

namespace omnib {

struct RankTcp {
  std::string congestion;     // a name resolve_tcp_congestion accepted; "" keeps the namespace's default
  bool idle_restart = false;  // net.ipv4.tcp_slow_start_after_idle
};

// The commands that set `tcp` in namespace `netns`, each writing one sysctl
// from inside it (procps' sysctl is not everywhere; a shell is).
std::vector<std::vector<std::string>> rank_tcp_commands(const std::string& netns, const RankTcp& tcp);

// "on" or "off": how --tcp-idle-restart and the record spell it.
const char* idle_restart_name(bool on);

}  // namespace omnib
