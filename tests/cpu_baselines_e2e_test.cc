// End-to-end: the CPU baselines over our TCP transport (ring, allgather,
// sparcml-split, sparcml-recdbl) run as real processes on loopback, must
// match the reference exactly, and must put on the wire what their cost
// models (docs/algorithms.md) say.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "engine/transport/socket_util.h"
#include "tests/cli_runner.h"

namespace omnib {
namespace {

using testing::read_json;
using testing::run_cli;
using testing::temp_path;

const std::vector<std::string> kAlgos = {"ring", "allgather", "sparcml-split", "sparcml-recdbl"};
const char* const kAlgoList = "ring,allgather,sparcml-split,sparcml-recdbl";

nlohmann::json run_ok(std::vector<std::string> args) {
  std::string json = temp_path("out.json");
  std::vector<std::string> full{"allreduce", "--algo", kAlgoList, "-n", "2", "-w", "1", "-T", "20", "-J", json};
  full.insert(full.end(), args.begin(), args.end());
  auto r = run_cli(full, {}, 60);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  if (r.exit_code != 0) return {};
  return read_json(json);
}

// Every algorithm ran, once per size, and every element matched.
void expect_all_correct(const nlohmann::json& doc, size_t sizes) {
  ASSERT_TRUE(doc.contains("results"));
  ASSERT_EQ(doc["results"].size(), kAlgos.size() * sizes);
  for (const auto& r : doc["results"]) {
    EXPECT_FALSE(r.value("skipped", false)) << r.dump();
    EXPECT_TRUE(r["checked"].get<bool>());
    EXPECT_TRUE(r["correct"].get<bool>()) << r["algo"] << " " << r["nodes"] << " " << r["density"];
    EXPECT_EQ(r["wrong_elements"].get<uint64_t>(), 0u) << r["algo"];
  }
}

struct Grid {
  int nodes;
  std::string density;
};

class CpuBaselinesExact : public ::testing::TestWithParam<Grid> {};

// 400012 bytes = 100003 elements: a prime, so it divides evenly by neither the
// node count, the block size, nor the frame size.
TEST_P(CpuBaselinesExact, UnevenCountMatchesReference) {
  const Grid g = GetParam();
  auto doc = run_ok({"--nodes", std::to_string(g.nodes), "-b", "400012", "-e", "400012", "--density", g.density});
  expect_all_correct(doc, 1);
}

INSTANTIATE_TEST_SUITE_P(NodesAndDensities, CpuBaselinesExact,
                         ::testing::Values(Grid{3, "0"}, Grid{3, "0.01"}, Grid{3, "0.5"}, Grid{3, "1"}, Grid{4, "0"},
                                           Grid{4, "0.01"}, Grid{4, "0.5"}, Grid{4, "1"}, Grid{5, "0"}, Grid{5, "0.01"},
                                           Grid{5, "0.5"}, Grid{5, "1"}),
                         [](const auto& info) {
                           std::string d = info.param.density;
                           for (auto& ch : d)
                             if (ch == '.') ch = '_';
                           return "nodes" + std::to_string(info.param.nodes) + "_density" + d;
                         });

struct Case {
  std::string name;
  std::vector<std::string> args;
  size_t sizes = 1;
};

class CpuBaselinesEdgeCases : public ::testing::TestWithParam<Case> {};

TEST_P(CpuBaselinesEdgeCases, MatchesReference) {
  auto doc = run_ok(GetParam().args);
  expect_all_correct(doc, GetParam().sizes);
}

INSTANTIATE_TEST_SUITE_P(
    Configurations, CpuBaselinesEdgeCases,
    ::testing::Values(
        Case{"one_rank", {"--nodes", "1", "-b", "64K", "-e", "64K", "--density", "0.3"}},
        Case{"two_ranks", {"--nodes", "2", "-b", "64K", "-e", "64K", "--density", "0.3"}},
        // Fewer elements than ranks: some slices and segments are empty.
        Case{"fewer_elements_than_ranks", {"--nodes", "5", "-b", "12", "-e", "12", "--density", "1"}},
        Case{"in_place_int32",
             {"--nodes", "4", "-b", "1M", "-e", "1M", "--density", "0.2", "--inplace", "-d", "int32"}},
        Case{"dedicated_aggregator_ranks_stay_out",
             {"--nodes", "3", "--aggregators", "2", "-b", "256K", "-e", "256K", "--density", "0.1"}},
        Case{"disjoint_sets", {"--nodes", "4", "-b", "1M", "-e", "1M", "--density", "0.2", "--overlap", "none"}},
        // Several sizes reuse one collective: sequence numbers and buffers carry over.
        Case{"several_sizes", {"--nodes", "3", "-b", "4K", "-e", "4M", "-f", "32", "--density", "0.05"}, 3}),
    [](const auto& info) { return info.param.name; });

// Measured bytes per rank stay within 15% of each cost model.
TEST(CpuBaselinesWireBytes, MatchTheAnalyticModel) {
  auto doc = run_ok({"--nodes", "4", "-b", "4M", "-e", "4M", "--density", "0.1"});
  expect_all_correct(doc, 1);
  for (const auto& r : doc["results"]) {
    ASSERT_TRUE(r["wire_bytes"].is_object()) << r.dump();
    const double measured = r["wire_bytes"]["sent_per_rank_max"].get<double>();
    const double model = r["analytic_bytes"]["sent_per_rank_max"].get<double>();
    ASSERT_GT(model, 0) << r["algo"];
    EXPECT_NEAR(measured / model, 1.0, 0.15) << r["algo"] << ": measured " << measured << ", model " << model;
  }
}

// A silent peer (SIGSTOP) must not hang the others: every wait of these
// algorithms is bounded by -T. Ranks start the way torchrun would, so that
// one of them can be stopped.
class CpuBaselinesSilentPeer : public ::testing::TestWithParam<std::string> {};

pid_t start_rank(int rank, int world, int port, const std::vector<std::string>& args) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  setenv("RANK", std::to_string(rank).c_str(), 1);
  setenv("WORLD_SIZE", std::to_string(world).c_str(), 1);
  setenv("MASTER_ADDR", "127.0.0.1", 1);
  setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
  std::vector<char*> argv;
  std::string binary = OMNIB_BINARY;
  argv.push_back(binary.data());
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int devnull = open("/dev/null", O_WRONLY);
  dup2(devnull, 1);
  dup2(devnull, 2);
  execv(binary.c_str(), argv.data());
  _exit(127);
}

TEST_P(CpuBaselinesSilentPeer, OtherRanksFailWithinTheTimeout) {
  using Clock = std::chrono::steady_clock;
  constexpr int kWorld = 3;
  constexpr int kTimeoutSeconds = 2;
  auto listener = listen_on({"127.0.0.1", 0});
  ASSERT_TRUE(listener.is_ok());
  const int port = local_address(listener.value()).value().port;
  close(listener.value());
  // Many iterations: the run is still going when the victim stops.
  std::vector<std::string> args{"allreduce", "--algo", GetParam(), "-b", "1M", "-e", "1M", "-n", "1000000",
                                "-w", "0", "-T", std::to_string(kTimeoutSeconds), "--density", "0.1"};
  std::vector<pid_t> pids;
  for (int r = 0; r < kWorld; ++r) pids.push_back(start_rank(r, kWorld, port, args));
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  const int victim = 1;
  kill(pids[victim], SIGSTOP);
  // The wait in progress, one more for a store wait, and slack for 2 cores.
  const auto deadline = Clock::now() + std::chrono::seconds(2 * kTimeoutSeconds + 5);
  for (int r = 0; r < kWorld; ++r) {
    if (r == victim) continue;
    int code = -1;
    while (Clock::now() < deadline) {
      int status = 0;
      if (waitpid(pids[r], &status, WNOHANG) == pids[r]) {
        code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    EXPECT_NE(code, -1) << "rank " << r << " still running after the timeout";
    EXPECT_NE(code, 0) << "rank " << r;
  }
  for (pid_t p : pids) {
    kill(p, SIGKILL);
    waitpid(p, nullptr, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Algorithms, CpuBaselinesSilentPeer, ::testing::ValuesIn(kAlgos), [](const auto& info) {
  std::string name = info.param;
  for (auto& ch : name)
    if (ch == '-') ch = '_';
  return name;
});

}  // namespace
}  // namespace omnib
