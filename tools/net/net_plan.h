// Names and addresses of one emulated cluster. Every name embeds the pid of
// the process that owns the cluster ("ob<pid>-..."), so leftovers of a run
// that died can be told apart from the network of a run still going.
#pragma once

#include <sys/types.h>

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/base/status.h"

namespace omnib {

// Addresses come from 198.18.0.0/15 (RFC 2544, reserved for benchmarking):
// one /24 per cluster, 512 of them; the bridge takes .254, rank r takes .r+1.
constexpr int kEmulatedSubnets = 512;
constexpr int kMaxEmulatedRanks = 253;
constexpr int kEmulatedPrefixLength = 24;

struct RankNet {
  std::string netns;     // ob<pid>-r<rank>: the rank's network namespace
  std::string host_dev;  // ob<pid>-h<rank>: bridge-side end of its veth pair (shapes what it receives)
  std::string rank_dev;  // ob<pid>-n<rank>: the end inside the namespace (shapes what it sends)
  std::string address;   // without prefix length
};

struct NetPlan {
  pid_t owner = 0;
  int subnet = 0;  // index of the /24 inside 198.18.0.0/15
  std::string bridge;  // ob<pid>-br, in the owner's namespace
  std::string bridge_address;
  std::vector<RankNet> ranks;
};

// The plan for `world` ranks owned by `owner`, on the first subnet not in
// `used_subnets`, starting from one derived from the pid (so concurrent runs
// rarely even probe the same one). Names stay within IFNAMSIZ (15 characters).
Result<NetPlan> make_net_plan(pid_t owner, int world, const std::set<int>& used_subnets);

// "ob<pid>-": the start of every name the owner's cluster uses.
std::string net_name_prefix(pid_t owner);

// The owner pid embedded in a name made by make_net_plan; nullopt for other names.
std::optional<pid_t> net_name_owner(const std::string& name);

// The address of `host` (1..254) in `subnet`, and the subnet of an IPv4
// address in 198.18.0.0/15 (nullopt outside it).
std::string subnet_address(int subnet, int host);
std::optional<int> subnet_of(const std::string& ipv4);

}  // namespace omnib
