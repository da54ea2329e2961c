#include "tools/net/emulated_network.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <unistd.h>

#include <set>

#include "tools/net/command_runner.h"
#include "tools/net/link_shaper.h"
#include "tools/net/rank_tcp.h"
#include "tools/net/net_cleanup.h"
#include "tools/net/net_lock.h"

namespace omnib {
namespace {

// The /24s of 198.18.0.0/15 that interfaces of this namespace already use.
std::set<int> subnets_in_use() {
  std::set<int> used;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return used;
  for (ifaddrs* a = list; a; a = a->ifa_next) {
    if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET) continue;
    char text[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr, text, sizeof(text));
    if (auto s = subnet_of(text)) used.insert(*s);
  }
  freeifaddrs(list);
  return used;
}

// A qdisc the kernel lacks is a missing module, not a bug: say which one.
Status explain_qdisc_failure(const Status& s, const LinkShape& shape) {
  if (s.message().find("qdisc kind is unknown") == std::string::npos) return s;
  if (shape.delay.count() > 0 && s.message().find("netem") != std::string::npos)
    return unavailable_error(
        "this kernel has no netem qdisc (sch_netem, CONFIG_NET_SCH_NETEM), which --link-delay needs: load it "
        "with 'modprobe sch_netem', or run with --link-delay 0 (rate shaping alone needs only sch_tbf)");
  return unavailable_error("this kernel has no tbf qdisc (sch_tbf, CONFIG_NET_SCH_TBF), which --net emulate "
                           "needs to limit link rates: load it with 'modprobe sch_tbf'");
}

}  // namespace

Result<std::unique_ptr<EmulatedNetwork>> EmulatedNetwork::create(int world, const LinkShape& shape,
                                                                 const RankTcp& tcp,
                                                                 const std::function<bool()>& cancelled) {
  // Held while building: a concurrent run must not pick the same subnet, nor
  // mistake our half-built cluster for a leftover.
  NetLock lock;
  // Leftovers of runs that died (their owner pid is gone) go first; so does
  // anything named for our own pid, which can only be from a dead process that
  // had it before.
  (void)remove_stale_networks();
  OMNIB_RETURN_IF_ERROR(remove_emulated_network(getpid()));
  auto plan = make_net_plan(getpid(), world, subnets_in_use());
  if (!plan.is_ok()) return plan.status();
  std::unique_ptr<EmulatedNetwork> net(new EmulatedNetwork(plan.take(), shape, tcp));
  Status built = net->build(cancelled);
  if (!built.is_ok()) {
    (void)net->tear_down();
    return built;
  }
  return net;
}

Status EmulatedNetwork::build(const std::function<bool()>& cancelled) {
  auto step = [&cancelled](const std::vector<std::string>& argv) -> Status {
    if (cancelled && cancelled()) return unavailable_error("interrupted while building the emulated network");
    return run_checked(argv);
  };
  const std::string prefix_len = "/" + std::to_string(kEmulatedPrefixLength);
  const std::string& br = plan_.bridge;
  // The switch. addrgenmode none: no IPv6 link-local address, so no router
  // solicitations or DAD probes show up in the link byte counts.
  OMNIB_RETURN_IF_ERROR(step({"ip", "link", "add", "name", br, "type", "bridge"}));
  OMNIB_RETURN_IF_ERROR(step({"ip", "link", "set", "dev", br, "addrgenmode", "none"}));
  OMNIB_RETURN_IF_ERROR(step({"ip", "addr", "add", plan_.bridge_address + prefix_len, "dev", br}));
  OMNIB_RETURN_IF_ERROR(step({"ip", "link", "set", "dev", br, "up"}));
  for (const RankNet& r : plan_.ranks) {
    OMNIB_RETURN_IF_ERROR(step({"ip", "netns", "add", r.netns}));
    // The rank's end is born inside its namespace: no name clash in ours, and
    // nothing to move.
    OMNIB_RETURN_IF_ERROR(
        step({"ip", "link", "add", "name", r.host_dev, "type", "veth", "peer", "name", r.rank_dev, "netns", r.netns}));
    OMNIB_RETURN_IF_ERROR(step({"ip", "link", "set", "dev", r.host_dev, "addrgenmode", "none", "master", br, "up"}));
    OMNIB_RETURN_IF_ERROR(step({"ip", "-n", r.netns, "link", "set", "dev", r.rank_dev, "addrgenmode", "none"}));
    OMNIB_RETURN_IF_ERROR(step({"ip", "-n", r.netns, "addr", "add", r.address + prefix_len, "dev", r.rank_dev}));
    OMNIB_RETURN_IF_ERROR(step({"ip", "-n", r.netns, "link", "set", "dev", r.rank_dev, "up"}));
    OMNIB_RETURN_IF_ERROR(step({"ip", "-n", r.netns, "link", "set", "dev", "lo", "up"}));
    for (const auto& argv : rank_tcp_commands(r.netns, tcp_)) OMNIB_RETURN_IF_ERROR(step(argv));
    // Egress inside the namespace shapes what the rank sends; egress of the
    // bridge-side end shapes what it receives.
    for (const auto& argv : shaping_commands(r.netns, r.rank_dev, shape_, LinkEnd::kRank))
      OMNIB_RETURN_IF_ERROR(explain_qdisc_failure(step(argv), shape_));
    for (const auto& argv : shaping_commands("", r.host_dev, shape_, LinkEnd::kSwitch))
      OMNIB_RETURN_IF_ERROR(explain_qdisc_failure(step(argv), shape_));
  }
  return Status::ok();
}

Status EmulatedNetwork::tear_down() {
  if (torn_down_) return Status::ok();
  Status s = remove_emulated_network(plan_.owner);
  if (s.is_ok()) torn_down_ = true;
  return s.with_context("removing the emulated network (run 'omni-bench net cleanup' to retry): ");
}

EmulatedNetwork::~EmulatedNetwork() { (void)tear_down(); }

}  // namespace omnib
