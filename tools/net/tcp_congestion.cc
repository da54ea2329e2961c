#include "tools/net/tcp_congestion.h"

#include <fstream>
#include <sstream>

namespace omnib {
namespace {

constexpr const char* kAvailablePath = "/proc/sys/net/ipv4/tcp_available_congestion_control";

std::string first_line(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

Result<std::string> resolve_tcp_congestion(const std::string& asked, const std::string& host_default,
                                           const std::string& available) {
  const std::string name = asked == kHostTcpCongestion ? host_default : asked;
  std::istringstream names(available);
  for (std::string known; names >> known;)
    if (known == name) return name;
  if (asked == kHostTcpCongestion)
    return unavailable_error("cannot read this host's TCP congestion control (" + std::string(kTcpCongestionSysctl) +
                             "): name one with --tcp-cc");
  return usage_error("--tcp-cc '" + asked + "' is not loaded in this kernel, which has: " + available +
                     " (load another with 'modprobe tcp_" + asked + "', or use 'host' for this host's default)");
}

Result<std::string> resolve_tcp_congestion(const std::string& asked) {
  return resolve_tcp_congestion(asked, first_line(kTcpCongestionSysctl), first_line(kAvailablePath));
}

std::string current_tcp_congestion() { return first_line(kTcpCongestionSysctl); }

}  // namespace omnib
