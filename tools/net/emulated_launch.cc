#include "tools/net/emulated_launch.h"

#include <signal.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstring>

#include "tools/net/command_runner.h"
#include "tools/net/emulated_network.h"
#include "tools/net/link_meter.h"
#include "tools/net/net_requirements.h"

namespace omnib {
namespace {

constexpr int kInterruptedExit = 130;

volatile sig_atomic_t g_stop = 0;
void on_stop(int) { g_stop = 1; }

int report(const Status& s) {
  std::fprintf(stderr, "omni-bench: %s\n", s.message().c_str());
  return exit_code(s.code());
}

// Catches the signals that end a run, so tear-down always gets to run; the
// previous handlers come back when this goes out of scope.
class StopSignals {
 public:
  StopSignals() {
    g_stop = 0;
    struct sigaction sa {};
    sa.sa_handler = on_stop;
    for (size_t i = 0; i < 3; ++i) sigaction(kSignals[i], &sa, &old_[i]);
  }
  ~StopSignals() {
    for (size_t i = 0; i < 3; ++i) sigaction(kSignals[i], &old_[i], nullptr);
  }
  bool stopped() const { return g_stop != 0; }

 private:
  static constexpr int kSignals[3] = {SIGINT, SIGTERM, SIGHUP};
  struct sigaction old_[3] {};
};

std::string self_executable() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "";
  return std::string(buf, static_cast<size_t>(n));
}

}  // namespace

std::vector<std::pair<std::string, std::string>> emulated_rank_env(const NetPlan& plan, int rank) {
  const std::string& dev = plan.ranks[static_cast<size_t>(rank)].rank_dev;
  // NCCL must cross the shaped link like every other algorithm: its socket
  // transport on exactly this device, never shared memory, GPU peer access
  // or InfiniBand between ranks of this one machine. So must libfabric's
  // tcp provider (--transport fabric); shm is refused under emulation.
  return {{kLinkDeviceVar, dev},
          {"NCCL_SOCKET_IFNAME", "=" + dev},
          {"NCCL_NET", "Socket"},
          {"NCCL_SHM_DISABLE", "1"},
          {"NCCL_P2P_DISABLE", "1"},
          {"FI_TCP_IFACE", dev}};
}

int launch_emulated(LocalLaunchPlan plan, const LinkShape& shape, const RankTcp& tcp) {
  Status can = check_emulation_requirements();
  if (!can.is_ok()) return report(can);
  // Ranks start through `ip netns exec`, for which /proc/self/exe would be ip.
  const std::string exe = self_executable();
  if (exe.empty()) return report(internal_error(std::string("cannot resolve /proc/self/exe: ") + std::strerror(errno)));
  const std::string ip = find_tool("ip");

  StopSignals signals;
  auto net = EmulatedNetwork::create(plan.world, shape, tcp, [&signals] { return signals.stopped(); });
  if (!net.is_ok()) return signals.stopped() ? kInterruptedExit : report(net.status());
  const NetPlan np = net.value()->plan();

  plan.store_host = np.bridge_address;
  plan.bind_host = [np](int rank) { return np.ranks[static_cast<size_t>(rank)].address; };
  plan.wrap_command = [np, ip, exe](int rank, const std::vector<std::string>& argv) {
    std::vector<std::string> wrapped = {ip, "netns", "exec", np.ranks[static_cast<size_t>(rank)].netns, exe};
    wrapped.insert(wrapped.end(), argv.begin() + 1, argv.end());
    return wrapped;
  };
  plan.rank_env = [np](int rank) { return emulated_rank_env(np, rank); };
  // launch_local takes SIGINT/SIGTERM over while ranks run (it stops them) and
  // hands them back to us afterwards.
  int code = signals.stopped() ? kInterruptedExit : launch_local(plan);

  Status down = net.value()->tear_down();
  if (!down.is_ok()) {
    int down_code = report(down);
    if (code == 0) code = down_code;
  }
  if (signals.stopped() && code == 0) code = kInterruptedExit;
  return code;
}

}  // namespace omnib
