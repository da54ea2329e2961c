#include "tools/net/rank_tcp.h"

#include "tools/net/command_runner.h"
#include "tools/net/tcp_congestion.h"

namespace omnib {
namespace {

// The value goes in as an argument, never as code.
std::vector<std::string> write_sysctl_command(const std::string& netns, const char* path, const std::string& value) {
  return {"ip", "netns", "exec", netns, find_tool("sh"), "-c", std::string("printf '%s' \"$1\" > ") + path,
          "omnib-sysctl", value};
}

}  // namespace

std::vector<std::vector<std::string>> rank_tcp_commands(const std::string& netns, const RankTcp& tcp) {
  std::vector<std::vector<std::string>> commands;
  if (!tcp.congestion.empty())
    commands.push_back(write_sysctl_command(netns, kTcpCongestionSysctl, tcp.congestion));
  commands.push_back(
      write_sysctl_command(netns, "/proc/sys/net/ipv4/tcp_slow_start_after_idle", tcp.idle_restart ? "1" : "0"));
  return commands;
}

const char* idle_restart_name(bool on) { return on ? "on" : "off"; }

}  // namespace omnib
