#include "tools/net/net_plan.h"

#include <arpa/inet.h>

#include <cctype>

namespace omnib {

std::string net_name_prefix(pid_t owner) { return "ob" + std::to_string(owner) + "-"; }

std::optional<pid_t> net_name_owner(const std::string& name) {
  if (name.size() < 4 || name.compare(0, 2, "ob") != 0) return std::nullopt;
  size_t i = 2;
  long pid = 0;
  while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])) && i < 12)
    pid = pid * 10 + (name[i++] - '0');
  if (i == 2 || i >= name.size() || name[i] != '-' || pid <= 0) return std::nullopt;
  return static_cast<pid_t>(pid);
}

std::string subnet_address(int subnet, int host) {
  return "198." + std::to_string(18 + subnet / 256) + "." + std::to_string(subnet % 256) + "." + std::to_string(host);
}

std::optional<int> subnet_of(const std::string& ipv4) {
  in_addr a{};
  if (inet_pton(AF_INET, ipv4.c_str(), &a) != 1) return std::nullopt;
  const uint32_t ip = ntohl(a.s_addr);
  if ((ip >> 17) != ((198u << 7) | (18u >> 1))) return std::nullopt;  // not in 198.18.0.0/15
  return static_cast<int>((ip >> 8) & 0x1ff);
}

Result<NetPlan> make_net_plan(pid_t owner, int world, const std::set<int>& used_subnets) {
  if (world < 1 || world > kMaxEmulatedRanks)
    return usage_error("--net emulate gives each rank an address in one /24: use at most " +
                       std::to_string(kMaxEmulatedRanks) + " ranks (--nodes plus --aggregators)");
  NetPlan plan;
  plan.owner = owner;
  plan.subnet = -1;
  for (int k = 0; k < kEmulatedSubnets; ++k) {
    const int candidate = static_cast<int>((static_cast<unsigned>(owner) + static_cast<unsigned>(k)) % kEmulatedSubnets);
    if (!used_subnets.count(candidate)) {
      plan.subnet = candidate;
      break;
    }
  }
  if (plan.subnet < 0)
    return unavailable_error("every /24 of 198.18.0.0/15 is in use on this machine: remove leftovers with "
                             "'omni-bench net cleanup' or free some of those addresses");
  const std::string prefix = net_name_prefix(owner);
  plan.bridge = prefix + "br";
  plan.bridge_address = subnet_address(plan.subnet, 254);
  for (int r = 0; r < world; ++r) {
    RankNet n;
    n.netns = prefix + "r" + std::to_string(r);
    n.host_dev = prefix + "h" + std::to_string(r);
    n.rank_dev = prefix + "n" + std::to_string(r);
    n.address = subnet_address(plan.subnet, r + 1);
    plan.ranks.push_back(n);
  }
  return plan;
}

}  // namespace omnib
