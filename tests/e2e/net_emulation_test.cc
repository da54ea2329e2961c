// Emulated clusters (--net emulate): the option parsers and naming scheme
// everywhere; with root and iproute2, that a shaped link delivers its rate,
// that every CPU algorithm gives correct results through the links, and that
// no namespace, veth or qdisc outlives a run that ends normally, fails, loses
// a rank, is interrupted, or is SIGKILLed (then `net cleanup` or the next run
// removes it).
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "engine/build_features.h"
#include "tests/support/cli_runner.h"
#include "tools/net/command_runner.h"
#include "tools/net/emulated_launch.h"
#include "tools/net/emulated_network.h"
#include "tools/net/link_meter.h"
#include "tools/config/link_shape.h"
#include "tools/net/link_shaper.h"
#include "tools/net/net_cleanup.h"
#include "tools/net/net_plan.h"
#include "tools/net/net_requirements.h"
#include "tools/net/tcp_congestion.h"

namespace omnib {
namespace {

using Clock = std::chrono::steady_clock;
using testing::read_json;
using testing::run_cli;
using testing::temp_path;

// ---------------------------------------------------------------- everywhere

TEST(LinkShapeParse, AcceptsTcStyleRates) {
  EXPECT_EQ(parse_link_rate("100mbit").value(), 100'000'000u);
  EXPECT_EQ(parse_link_rate("1gbit").value(), 1'000'000'000u);
  EXPECT_EQ(parse_link_rate("10Gbit").value(), 10'000'000'000u);
  EXPECT_EQ(parse_link_rate("2.5gbit").value(), 2'500'000'000u);
  EXPECT_EQ(parse_link_rate("1mibit").value(), 1'048'576u);
  EXPECT_EQ(parse_link_rate("125mbps").value(), 1'000'000'000u);  // bytes per second, as in tc
}

TEST(LinkShapeParse, RefusesRatesWithAUsageError) {
  for (const char* bad : {"", "10", "fast", "1gb", "1.2.3gbit", "-1gbit", "gbit", "0mbit", "100kbit", "2tbit"}) {
    auto r = parse_link_rate(bad);
    ASSERT_FALSE(r.is_ok()) << bad;
    EXPECT_EQ(r.status().code(), Code::kUsage) << bad;
    EXPECT_NE(r.status().message().find("--link-rate"), std::string::npos) << r.status().message();
  }
  EXPECT_NE(parse_link_rate("10").status().message().find("no unit"), std::string::npos);
}

TEST(LinkShapeParse, AcceptsAndRefusesDelays) {
  EXPECT_EQ(parse_link_delay("0").value().count(), 0);
  EXPECT_EQ(parse_link_delay("50us").value().count(), 50'000);
  EXPECT_EQ(parse_link_delay("1.5ms").value().count(), 1'500'000);
  EXPECT_EQ(parse_link_delay("2s").value().count(), 2'000'000'000);
  for (const char* bad : {"50", "5 us", "fast", "11s", "1m"}) EXPECT_FALSE(parse_link_delay(bad).is_ok()) << bad;
}

TEST(LinkShapeParse, FormatsShortly) {
  EXPECT_EQ(format_link_rate(1'000'000'000), "1gbit");
  EXPECT_EQ(format_link_rate(2'500'000'000), "2.5gbit");
  EXPECT_EQ(format_link_rate(200'000'000), "200mbit");
  EXPECT_EQ(format_link_delay(std::chrono::microseconds(50)), "50us");
  EXPECT_EQ(format_link_delay(std::chrono::nanoseconds(0)), "0");
}

TEST(NetPlan, NamesFitIfnamsizAndCarryTheOwner) {
  const pid_t big_pid = 4194304;  // the largest pid_max
  auto plan = make_net_plan(big_pid, kMaxEmulatedRanks, {});
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  std::set<std::string> addresses;
  for (const auto& r : plan.value().ranks) {
    EXPECT_LE(r.host_dev.size(), 15u) << r.host_dev;
    EXPECT_LE(r.rank_dev.size(), 15u) << r.rank_dev;
    EXPECT_EQ(net_name_owner(r.netns), big_pid);
    EXPECT_EQ(net_name_owner(r.host_dev), big_pid);
    EXPECT_EQ(subnet_of(r.address), plan.value().subnet);
    addresses.insert(r.address);
  }
  EXPECT_LE(plan.value().bridge.size(), 15u);
  EXPECT_EQ(addresses.size(), static_cast<size_t>(kMaxEmulatedRanks));
  EXPECT_FALSE(addresses.count(plan.value().bridge_address));
  EXPECT_FALSE(make_net_plan(1, kMaxEmulatedRanks + 1, {}).is_ok());
}

TEST(EmulatedRankEnv, KeepsNcclOnTheRanksOwnLink) {
  auto plan = make_net_plan(1234, 3, {});
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  for (int rank = 0; rank < 3; ++rank) {
    std::map<std::string, std::string> env;
    for (const auto& [k, v] : emulated_rank_env(plan.value(), rank)) env[k] = v;
    const std::string& dev = plan.value().ranks[static_cast<size_t>(rank)].rank_dev;
    EXPECT_EQ(env[kLinkDeviceVar], dev);
    EXPECT_EQ(env["NCCL_SOCKET_IFNAME"], "=" + dev);  // exact name, not a prefix
    EXPECT_EQ(env["NCCL_NET"], "Socket");
    EXPECT_EQ(env["NCCL_SHM_DISABLE"], "1");
    EXPECT_EQ(env["NCCL_P2P_DISABLE"], "1");
    EXPECT_EQ(env["FI_TCP_IFACE"], dev);
  }
}

TEST(NetPlan, SkipsSubnetsInUseAndStaysInTheBenchmarkRange) {
  auto first = make_net_plan(7, 2, {}).value();
  auto second = make_net_plan(7, 2, {first.subnet}).value();
  EXPECT_NE(first.subnet, second.subnet);
  EXPECT_EQ(subnet_of("198.19.255.1"), 511);
  EXPECT_EQ(subnet_of("198.18.0.1"), 0);
  EXPECT_FALSE(subnet_of("198.20.0.1").has_value());
  EXPECT_FALSE(subnet_of("10.0.0.1").has_value());
  EXPECT_FALSE(net_name_owner("eth0").has_value());
  EXPECT_FALSE(net_name_owner("ob-br").has_value());
  EXPECT_FALSE(net_name_owner("obx12-br").has_value());
}

TEST(LinkShaper, ShapesRateAloneOrDelayThenRate) {
  LinkShape s;
  s.rate_bps = 1'000'000'000;
  auto plain = shaping_commands("ns", "dev", s, LinkEnd::kRank);
  ASSERT_EQ(plain.size(), 1u);
  const std::string joined = [&] {
    std::string j;
    for (const auto& a : plain[0]) j += a + " ";
    return j;
  }();
  EXPECT_NE(joined.find("tc -n ns qdisc replace dev dev root handle 1: tbf rate 1000000000bit"), std::string::npos)
      << joined;
  s.delay = std::chrono::microseconds(50);
  auto delayed = shaping_commands("", "dev", s, LinkEnd::kSwitch);
  ASSERT_EQ(delayed.size(), 2u);
  EXPECT_EQ(delayed[0][0], "tc");
  EXPECT_NE(std::find(delayed[0].begin(), delayed[0].end(), "netem"), delayed[0].end());
  EXPECT_NE(std::find(delayed[1].begin(), delayed[1].end(), "tbf"), delayed[1].end());
  const TokenBucket port = token_bucket_for(1'000'000'000, LinkEnd::kSwitch);
  EXPECT_GE(port.burst_bytes, 64u * 1024);
  EXPECT_EQ(port.limit_bytes, 1'250'000u);  // 10 ms at 1 Gbit/s
  EXPECT_GE(token_bucket_for(1'000'000'000, LinkEnd::kRank).limit_bytes, 4u << 20);
}

TEST(LinkMeter, CreditsEachWindowToItsSlot) {
  uint64_t counter = 100;
  auto made = LinkMeter::on([&counter] { return Result<uint64_t>(counter); }, 2);
  ASSERT_TRUE(made.is_ok());
  auto meter = made.take();
  ASSERT_TRUE(meter->switch_to(0).is_ok());
  counter += 10;
  ASSERT_TRUE(meter->switch_to(1).is_ok());
  counter += 5;
  ASSERT_TRUE(meter->switch_to(std::nullopt).is_ok());
  counter += 7;  // warm-up: nobody's
  ASSERT_TRUE(meter->switch_to(0).is_ok());
  counter += 1;
  ASSERT_TRUE(meter->switch_to(std::nullopt).is_ok());
  EXPECT_EQ(meter->sent(0), 11u);
  EXPECT_EQ(meter->sent(1), 5u);
  meter->reset();
  EXPECT_FALSE(meter->sent(0).has_value());
}

TEST(NetCli, ShapingWithoutEmulationIsAUsageError) {
  auto r = run_cli({"allreduce", "--link-rate", "1gbit", "-b", "1K", "-e", "1K"}, {}, 30);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--net emulate"), std::string::npos) << r.err;
  r = run_cli({"allreduce", "--net", "emulate", "--link-rate", "10", "-b", "1K", "-e", "1K"}, {}, 30);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("no unit"), std::string::npos) << r.err;
  r = run_cli({"allreduce", "--net", "wan", "-b", "1K", "-e", "1K"}, {}, 30);
  EXPECT_EQ(r.exit_code, 2) << r.err;
}

TEST(NetCli, EmulationUnderAnExternalLauncherIsAUsageError) {
  auto r = run_cli({"allreduce", "--net", "emulate", "-b", "1K", "-e", "1K"},
                   {"OMPI_COMM_WORLD_RANK=1", "OMPI_COMM_WORLD_SIZE=2", "MASTER_ADDR=127.0.0.1", "MASTER_PORT=1"}, 30);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("own launcher"), std::string::npos) << r.err;
}

// A process that runs omni-bench with a known pid, optionally as `nobody`.
struct Spawned {
  pid_t pid = -1;
  std::string out_path, err_path;
};

Spawned spawn_cli(const std::vector<std::string>& args, bool as_nobody = false) {
  Spawned s;
  s.out_path = temp_path("spawn" + std::to_string(std::rand()) + ".out");
  s.err_path = s.out_path + ".err";
  std::vector<std::string> argv = {OMNIB_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargs;
  for (auto& a : argv) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  s.pid = fork();
  if (s.pid == 0) {
    setpgid(0, 0);
    int out = open(s.out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = open(s.err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out, 1);
    dup2(err, 2);
    if (as_nobody && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(126);
    execv(cargs[0], cargs.data());
    _exit(127);
  }
  setpgid(s.pid, s.pid);
  return s;
}

// Exit code, or -9 after killing it at the limit.
int wait_exit(pid_t pid, int limit_seconds) {
  const auto end = Clock::now() + std::chrono::seconds(limit_seconds);
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (Clock::now() > end) {
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -9;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(NetCli, WithoutPrivilegesExitsSixAndSaysWhatIsNeeded) {
  const bool root = geteuid() == 0;
  // The binary must be reachable by `nobody` for the root variant.
  if (root && access(OMNIB_BINARY, X_OK) != 0) GTEST_SKIP() << "binary not accessible";
  auto s = spawn_cli({"allreduce", "--net", "emulate", "--nodes", "2", "-b", "1K", "-e", "1K"}, root);
  const int code = wait_exit(s.pid, 30);
  const std::string err = slurp(s.err_path);
  if (code == 126 || code == 127) GTEST_SKIP() << "cannot run the binary as nobody here";
  EXPECT_EQ(code, 6) << err;
  EXPECT_NE(err.find("CAP_NET_ADMIN"), std::string::npos) << err;
  EXPECT_NE(err.find("root"), std::string::npos) << err;
}

// ------------------------------------------------------ root and iproute2 only

bool can_emulate(std::string* why) {
  if (!has_net_admin_privileges()) {
    *why = "needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN)";
    return false;
  }
  if (find_tool("ip").empty() || find_tool("tc").empty()) {
    *why = "needs iproute2 (ip, tc)";
    return false;
  }
  return true;
}

#define SKIP_UNLESS_EMULATION_WORKS()            \
  do {                                           \
    std::string why;                             \
    if (!can_emulate(&why)) GTEST_SKIP() << why; \
  } while (0)

// Runs `fn` on a thread that has entered namespace `netns` (sockets it opens
// live there).
template <typename Fn>
std::thread in_netns(const std::string& netns, Fn fn) {
  return std::thread([netns, fn] {
    int fd = open(("/var/run/netns/" + netns).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || setns(fd, CLONE_NEWNET) != 0) {
      ADD_FAILURE() << "cannot enter " << netns << ": " << std::strerror(errno);
      if (fd >= 0) close(fd);
      return;
    }
    close(fd);
    fn();
  });
}

sockaddr_in ipv4(const std::string& address, uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  inet_pton(AF_INET, address.c_str(), &a.sin_addr);
  return a;
}

// Goodput of one TCP stream from rank 0 to rank 1 over `seconds`, measured by
// the receiver after a short ramp-up.
double measure_goodput_bps(const NetPlan& plan, double seconds) {
  const uint16_t port = 45123;
  std::atomic<bool> listening{false};
  std::atomic<bool> done{false};
  double goodput = 0;
  std::thread receiver = in_netns(plan.ranks[1].netns, [&] {
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    timeval wait{5, 0};  // no sender: give up instead of hanging
    setsockopt(ls, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
    sockaddr_in a = ipv4(plan.ranks[1].address, port);
    if (bind(ls, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 || listen(ls, 1) != 0) {
      ADD_FAILURE() << "listen: " << std::strerror(errno);
      listening = true;
      done = true;
      return;
    }
    listening = true;
    int c = accept(ls, nullptr, nullptr);
    if (c < 0) {
      ADD_FAILURE() << "accept: " << std::strerror(errno);
      done = true;
      close(ls);
      return;
    }
    std::vector<char> buf(1 << 20);
    const auto start = Clock::now();
    const auto ramp = start + std::chrono::milliseconds(300);
    const auto end = ramp + std::chrono::duration<double>(seconds);
    uint64_t bytes = 0;
    Clock::time_point first;
    bool counting = false;
    while (Clock::now() < end) {
      ssize_t n = recv(c, buf.data(), buf.size(), 0);
      if (n <= 0) break;
      if (!counting && Clock::now() >= ramp) {
        counting = true;
        first = Clock::now();
        continue;
      }
      if (counting) bytes += static_cast<uint64_t>(n);
    }
    const double elapsed = std::chrono::duration<double>(Clock::now() - first).count();
    goodput = counting && elapsed > 0 ? static_cast<double>(bytes) * 8 / elapsed : 0;
    done = true;
    close(c);
    close(ls);
  });
  while (!listening) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::thread sender = in_netns(plan.ranks[0].netns, [&] {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a = ipv4(plan.ranks[1].address, port);
    if (connect(s, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
      ADD_FAILURE() << "connect: " << std::strerror(errno);
      close(s);
      return;
    }
    std::vector<char> buf(1 << 20, 'x');
    while (!done)
      if (send(s, buf.data(), buf.size(), MSG_NOSIGNAL) <= 0) break;
    close(s);
  });
  receiver.join();
  sender.join();
  return goodput;
}

// Names of `owner`'s cluster still present: namespaces, links, qdiscs.
std::vector<std::string> leftovers_of(pid_t owner) {
  std::vector<std::string> left;
  for (const auto& t : find_emulated_networks()) {
    if (t.owner != owner) continue;
    left.insert(left.end(), t.netns.begin(), t.netns.end());
    left.insert(left.end(), t.links.begin(), t.links.end());
  }
  auto qdiscs = run_command({"tc", "qdisc", "show"});
  if (qdiscs.is_ok() && qdiscs.value().out.find(net_name_prefix(owner)) != std::string::npos)
    left.push_back("a qdisc on " + net_name_prefix(owner) + "*");
  return left;
}

TEST(NetEmulation, ShapedLinkDeliversItsRate) {
  SKIP_UNLESS_EMULATION_WORKS();
  LinkShape shape;
  shape.rate_bps = 200'000'000;
  auto net = EmulatedNetwork::create(2, shape);
  ASSERT_TRUE(net.is_ok()) << net.status().message();
  // TCP payload is 1448 of every 1514 bytes the shaper counts: ~95.6% of the
  // rate. A stream short of it gets two more tries: under ctest -j 2 another
  // test can take the cores the stream needs (172 Mbit/s of 200 seen once).
  // No try may pass the rate; a shaper set too slow fails all three.
  double best = 0;
  for (int attempt = 0; attempt < 3 && best <= 0.90 * shape.rate_bps; ++attempt) {
    const double goodput = measure_goodput_bps(net.value()->plan(), 1.5);
    EXPECT_LT(goodput, 1.02 * shape.rate_bps) << goodput / 1e6 << " Mbit/s";
    best = std::max(best, goodput);
  }
  EXPECT_GT(best, 0.90 * shape.rate_bps) << best / 1e6 << " Mbit/s at best of three";
  EXPECT_TRUE(net.value()->tear_down().is_ok());
  EXPECT_TRUE(leftovers_of(getpid()).empty());
}

// A TCP sysctl of a rank's namespace (/proc/sys/net/ipv4/NAME).
std::string namespace_tcp_sysctl(const std::string& netns, const std::string& name) {
  auto r = run_command({"ip", "netns", "exec", netns, "cat", "/proc/sys/net/ipv4/" + name});
  if (!r.is_ok() || r.value().exit_code != 0) return "(unreadable)";
  std::string value = r.value().out;
  while (!value.empty() && value.back() == '\n') value.pop_back();
  return value;
}

// --tcp-cc reaches every rank's namespace; without it they keep the host's
// default. reno, because every kernel has it and hosts rarely default to it.
// Slow start after idle is off unless asked for (the kernel's default is on).
TEST(NetEmulation, RanksRunTheTcpAskedFor) {
  SKIP_UNLESS_EMULATION_WORKS();
  LinkShape shape;
  shape.rate_bps = 100'000'000;
  auto reno = EmulatedNetwork::create(2, shape, RankTcp{"reno", true});
  ASSERT_TRUE(reno.is_ok()) << reno.status().message();
  for (const RankNet& r : reno.value()->plan().ranks) {
    EXPECT_EQ(namespace_tcp_sysctl(r.netns, "tcp_congestion_control"), "reno") << r.netns;
    EXPECT_EQ(namespace_tcp_sysctl(r.netns, "tcp_slow_start_after_idle"), "1") << r.netns;
  }
  EXPECT_TRUE(reno.value()->tear_down().is_ok());
  auto host = EmulatedNetwork::create(2, shape);
  ASSERT_TRUE(host.is_ok()) << host.status().message();
  for (const RankNet& r : host.value()->plan().ranks) {
    EXPECT_EQ(namespace_tcp_sysctl(r.netns, "tcp_congestion_control"), current_tcp_congestion()) << r.netns;
    EXPECT_EQ(namespace_tcp_sysctl(r.netns, "tcp_slow_start_after_idle"), "0") << r.netns;
  }
  EXPECT_TRUE(host.value()->tear_down().is_ok());
  EXPECT_TRUE(leftovers_of(getpid()).empty());
}

bool netem_available() {
  // A throwaway dummy-free probe: netem on the loopback of a scratch namespace.
  const std::string ns = net_name_prefix(getpid()) + "probe";
  if (!run_checked({"ip", "netns", "add", ns}).is_ok()) return false;
  auto r = run_command({"tc", "-n", ns, "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms"});
  (void)run_checked({"ip", "netns", "del", ns});
  return r.is_ok() && r.value().exit_code == 0;
}

TEST(NetEmulation, DelayUsesNetemOrSaysItIsMissing) {
  SKIP_UNLESS_EMULATION_WORKS();
  LinkShape shape;
  shape.rate_bps = 1'000'000'000;
  shape.delay = std::chrono::milliseconds(2);
  const bool have_netem = netem_available();
  auto net = EmulatedNetwork::create(2, shape);
  if (!have_netem) {
    ASSERT_FALSE(net.is_ok());
    EXPECT_EQ(net.status().code(), Code::kUnavailable);
    EXPECT_NE(net.status().message().find("netem"), std::string::npos) << net.status().message();
    EXPECT_TRUE(leftovers_of(getpid()).empty()) << "a failed set-up left names";
    return;
  }
  ASSERT_TRUE(net.is_ok()) << net.status().message();
  // A TCP handshake crosses four shaped link directions twice: SYN out, SYN-ACK back.
  const auto& plan = net.value()->plan();
  std::atomic<bool> listening{false};
  std::thread server = in_netns(plan.ranks[1].netns, [&] {
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a = ipv4(plan.ranks[1].address, 45124);
    bind(ls, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    listen(ls, 1);
    listening = true;
    int c = accept(ls, nullptr, nullptr);
    close(c);
    close(ls);
  });
  while (!listening) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  double connect_ms = 0;
  std::thread client = in_netns(plan.ranks[0].netns, [&] {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a = ipv4(plan.ranks[1].address, 45124);
    auto t0 = Clock::now();
    EXPECT_EQ(connect(s, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    connect_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    close(s);
  });
  client.join();
  server.join();
  EXPECT_GT(connect_ms, 4 * 2 * 0.9) << connect_ms;  // 4 link directions x 2 ms
  EXPECT_LT(connect_ms, 4 * 2 * 3.0) << connect_ms;
}

// The CPU algorithms this build has, among those that run over our TCP links.
std::vector<std::string> cpu_algorithms() {
  static const std::set<std::string> cpu = {"omni",          "ps",           "ring",           "allgather",
                                            "sparcml-split", "sparcml-recdbl", "gloo-ring",    "gloo-ring-chunked",
                                            "gloo-bcube",    "gloo-halving-doubling"};
  auto r = run_cli({"list"}, {}, 30);
  std::vector<std::string> found;
  std::istringstream lines(r.out);
  std::string name, rest;
  while (lines >> name) {
    std::getline(lines, rest);
    if (cpu.count(name)) found.push_back(name);
  }
  return found;
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ",") + s;
  return out;
}

// Runs `algos` (and `extra` arguments) on three emulated ranks at 1 Gbit/s:
// every one is correct, its links carry about what it counted, and nothing
// of the emulated network is left.
void expect_correct_through_the_links(const std::vector<std::string>& algos, const std::vector<std::string>& extra) {
  ASSERT_FALSE(algos.empty());
  const std::string json = temp_path("emulated.json");
  std::vector<std::string> args{"allreduce", "--net", "emulate", "--link-rate", "1gbit", "--nodes", "3", "-b", "1M",
                                "-e", "1M", "--density", "0.1", "-n", "2", "-w", "1", "-T", "30", "--algo",
                                join(algos), "-J", json};
  args.insert(args.end(), extra.begin(), extra.end());
  auto run = spawn_cli(args);
  const int code = wait_exit(run.pid, 90);
  ASSERT_EQ(code, 0) << slurp(run.out_path) << slurp(run.err_path);
  EXPECT_TRUE(leftovers_of(run.pid).empty());
  const std::string table = slurp(run.out_path);
  EXPECT_NE(table.find("link/rank"), std::string::npos) << table;
  auto doc = read_json(json);
  EXPECT_EQ(doc["configuration"]["net"], "emulate");
  EXPECT_EQ(doc["configuration"]["link_rate_bps"], 1'000'000'000u);
  EXPECT_EQ(doc["configuration"]["link_delay_ns"], 0u);
  ASSERT_EQ(doc["results"].size(), algos.size());
  for (const auto& r : doc["results"]) {
    if (r.value("skipped", false)) continue;  // e.g. gloo-ring in a build without Gloo
    EXPECT_TRUE(r["correct"].get<bool>()) << r["algo"];
    ASSERT_TRUE(r.contains("link_bytes")) << r["algo"];
    const double link = r["link_bytes"]["sent_per_rank_max"].get<double>();
    EXPECT_GE(r["link_bytes"]["sent_total"].get<double>(), link);
    // What the algorithm counted itself, plus headers and ACKs: more, but not wildly more.
    if (r["wire_bytes"]["sent_per_rank_max"].is_number()) {
      const double wire = r["wire_bytes"]["sent_per_rank_max"].get<double>();
      EXPECT_GE(link, 0.98 * wire) << r["algo"];
      EXPECT_LE(link, 1.3 * wire + 64 * 1024) << r["algo"];
    }
  }
}

TEST(NetEmulation, EveryCpuAlgorithmIsCorrectThroughTheLinksAndNothingIsLeft) {
  SKIP_UNLESS_EMULATION_WORKS();
  expect_correct_through_the_links(cpu_algorithms(), {});
}

// The direct route's one stream is all that arrives on a rank's link, so
// it takes a larger budget than a shard's share (stream_tuning.h): at
// 100 Mbit/s a scattered stream of about 35 kB per peer crosses in a few
// frames, not eight, and the model follows the route's own cut.
TEST(NetEmulation, TheDirectRouteCutsItsStreamFromItsOwnBudget) {
  SKIP_UNLESS_EMULATION_WORKS();
  const std::string json = temp_path("direct-budget.json");
  auto r = run_cli({"allreduce", "--net", "emulate", "--link-rate", "100mbit", "--nodes", "4", "-b", "16M", "-e", "16M",
                    "--workload", "scattered", "--density", "0.001", "--route", "direct", "-n", "1", "-w", "0", "-T",
                    "30", "--algo", "omni", "-J", json},
                   {}, 90);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = read_json(json);
  const auto& result = doc["results"][0];
  EXPECT_TRUE(result["correct"].get<bool>());
  // Three peers, at most three frames each (a shard's share cut 8 each).
  EXPECT_LE(result["wire_bytes"]["frames_per_rank_max"].get<double>(), 9) << result["wire_bytes"].dump();
  EXPECT_EQ(result["wire_bytes"]["sent_per_rank_max"], result["analytic_bytes"]["sent_per_rank_max"]);
  EXPECT_EQ(result["wire_bytes"]["sent_total"], result["analytic_bytes"]["sent_total"]);
}

// On one lane (engine/omni/direct_lanes.h) the direct route waits on one
// Waker for its sends and its inputs alike. Through a slow link the last
// sends finish long after they are posted: if their completion woke only the
// (idle) send lane's Waker, a rank stalled until the timeout.
TEST(NetEmulation, TheDirectRouteOnOneLaneWakesForItsLastSends) {
  SKIP_UNLESS_EMULATION_WORKS();
  for (const char* lanes : {"1", "2"}) {
    SCOPED_TRACE(std::string("OMNIB_DIRECT_LANES=") + lanes);
    const std::string json = temp_path(std::string("direct-lanes-") + lanes + ".json");
    auto r = run_cli({"allreduce", "--net", "emulate", "--link-rate", "100mbit", "--nodes", "4", "-b", "4M", "-e", "4M",
                      "--density", "1", "--route", "direct", "-n", "2", "-w", "1", "-T", "10", "--algo", "omni", "-J",
                      json},
                     {std::string("OMNIB_DIRECT_LANES=") + lanes}, 90);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(read_json(json)["results"][0]["correct"].get<bool>());
  }
}

// --transport fabric (libfabric's tcp provider) crosses the same links.
TEST(NetEmulation, OurAlgorithmsOverFabricAreCorrectThroughTheLinks) {
  SKIP_UNLESS_EMULATION_WORKS();
  if (!OMNIB_WITH_LIBFABRIC) GTEST_SKIP() << "this build has no libfabric";
  expect_correct_through_the_links(
      {"omni", "ps", "ring", "allgather", "sparcml-split", "sparcml-recdbl", "tree", "oktopk"},
      {"--transport", "fabric", "--fabric-provider", "tcp"});
}

// Waits until `owner`'s ranks run inside their namespaces, then `settle` more.
bool wait_for_ranks(pid_t owner, int ranks, int limit_seconds,
                    std::chrono::milliseconds settle = std::chrono::milliseconds(800)) {
  const auto end = Clock::now() + std::chrono::seconds(limit_seconds);
  while (Clock::now() < end) {
    std::ifstream children("/proc/" + std::to_string(owner) + "/task/" + std::to_string(owner) + "/children");
    int count = 0;
    pid_t child;
    while (children >> child) ++count;
    if (count >= ranks) {
      std::this_thread::sleep_for(settle);
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

std::vector<pid_t> children_of(pid_t owner) {
  std::ifstream children("/proc/" + std::to_string(owner) + "/task/" + std::to_string(owner) + "/children");
  std::vector<pid_t> pids;
  pid_t child;
  while (children >> child) pids.push_back(child);
  return pids;
}

// A long run on slow links: each iteration moves 8 MiB per rank at 20 Mbit/s
// (about 4 s), so ranks are busy for minutes unless stopped.
std::vector<std::string> slow_run() {
  return {"allreduce", "--net", "emulate", "--link-rate", "20mbit", "--nodes", "2", "-b", "8M", "-e", "8M",
          "--density", "1", "-n", "50", "-w", "0", "-T", "10", "--algo", "omni"};
}

TEST(NetEmulation, ADeadRankLeavesNothing) {
  SKIP_UNLESS_EMULATION_WORKS();
  auto run = spawn_cli(slow_run());
  // Mid-transfer: the survivor learns from its broken links, not from a timeout.
  ASSERT_TRUE(wait_for_ranks(run.pid, 2, 30, std::chrono::seconds(2))) << slurp(run.err_path);
  auto ranks = children_of(run.pid);
  ASSERT_FALSE(ranks.empty());
  kill(ranks.back(), SIGKILL);
  const int code = wait_exit(run.pid, 60);
  EXPECT_NE(code, 0);
  EXPECT_NE(code, -9) << "the launcher did not notice its dead rank";
  EXPECT_NE(slurp(run.err_path).find("omni-bench: rank "), std::string::npos) << slurp(run.err_path);
  EXPECT_TRUE(leftovers_of(run.pid).empty());
}

TEST(NetEmulation, AnInterruptedRunLeavesNothing) {
  SKIP_UNLESS_EMULATION_WORKS();
  auto run = spawn_cli(slow_run());
  ASSERT_TRUE(wait_for_ranks(run.pid, 2, 30)) << slurp(run.err_path);
  kill(run.pid, SIGINT);
  EXPECT_EQ(wait_exit(run.pid, 30), 130) << slurp(run.err_path);
  EXPECT_TRUE(leftovers_of(run.pid).empty());
}

TEST(NetEmulation, AFailingRunLeavesNothing) {
  SKIP_UNLESS_EMULATION_WORKS();
  // A 2 s link delay: no answer can come within the 1 s any network wait may take.
  auto run = spawn_cli({"allreduce", "--net", "emulate", "--link-rate", "1gbit", "--link-delay", "2s", "--nodes", "2",
                        "-b", "1M", "-e", "1M", "--density", "1", "-n", "1", "-w", "0", "-T", "1", "--algo", "omni"});
  const int code = wait_exit(run.pid, 60);
  EXPECT_NE(code, 0) << slurp(run.out_path);
  EXPECT_NE(code, -9);
  EXPECT_TRUE(leftovers_of(run.pid).empty());
}

// Runs alone (suite NetEmulationAlone, tests/CMakeLists.txt): any other
// emulated run starting meanwhile would remove the leftovers first.
TEST(NetEmulationAlone, AKilledLauncherIsCleanedByNetCleanupAndByTheNextRun) {
  SKIP_UNLESS_EMULATION_WORKS();
  for (bool by_next_run : {false, true}) {
    auto run = spawn_cli(slow_run());
    ASSERT_TRUE(wait_for_ranks(run.pid, 2, 30)) << slurp(run.err_path);
    kill(run.pid, SIGKILL);
    wait_exit(run.pid, 10);
    // Its ranks die with it (PR_SET_PDEATHSIG); give them a moment to go.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    ASSERT_FALSE(leftovers_of(run.pid).empty()) << "a SIGKILLed launcher cannot clean up: expected leftovers";
    if (by_next_run) {
      auto next = run_cli({"allreduce", "--net", "emulate", "--nodes", "2", "-b", "4K", "-e", "4K", "-n", "1", "-w",
                           "0"},
                          {}, 60);
      EXPECT_EQ(next.exit_code, 0) << next.err;
    } else {
      auto cleanup = run_cli({"net", "cleanup"}, {}, 60);
      EXPECT_EQ(cleanup.exit_code, 0) << cleanup.err;
      EXPECT_NE(cleanup.out.find("removed the cluster of finished process " + std::to_string(run.pid)),
                std::string::npos)
          << cleanup.out;
    }
    EXPECT_TRUE(leftovers_of(run.pid).empty()) << (by_next_run ? "next run" : "net cleanup");
  }
}

}  // namespace
}  // namespace omnib
