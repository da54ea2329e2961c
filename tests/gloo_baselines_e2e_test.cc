// End-to-end: the Gloo baselines (gloo-ring, gloo-ring-chunked,
// gloo-halving-doubling, gloo-bcube) run as real processes over Gloo's own
// TCP transport and rendezvous through our store, and must match the
// reference exactly. A build without Gloo must still know the names.
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
#include "tools/build_info.h"

namespace omnib {
namespace {

using testing::read_json;
using testing::run_cli;
using testing::temp_path;

const std::vector<std::string> kGlooAlgos = {"gloo-ring", "gloo-ring-chunked", "gloo-halving-doubling", "gloo-bcube"};
const char* const kGlooAlgoList = "gloo-ring,gloo-ring-chunked,gloo-halving-doubling,gloo-bcube";

#define SKIP_WITHOUT_GLOO() \
  if (!OMNIB_WITH_GLOO) GTEST_SKIP() << "this build has no Gloo (install libgloo-dev and rebuild)"

nlohmann::json run_ok(std::vector<std::string> args) {
  std::string json = temp_path("out.json");
  std::vector<std::string> full{"allreduce", "--algo", kGlooAlgoList, "-n", "2", "-w", "1", "-T", "20", "-J", json};
  full.insert(full.end(), args.begin(), args.end());
  auto r = run_cli(full, {}, 60);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  if (r.exit_code != 0) return {};
  return read_json(json);
}

// Every Gloo algorithm ran, once per size, and every element matched.
void expect_all_correct(const nlohmann::json& doc, size_t sizes) {
  ASSERT_TRUE(doc.contains("results"));
  ASSERT_EQ(doc["results"].size(), kGlooAlgos.size() * sizes);
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

class GlooBaselinesExact : public ::testing::TestWithParam<Grid> {};

// 400012 bytes = 100003 elements, a prime: no chunking of Gloo's divides
// it evenly.
TEST_P(GlooBaselinesExact, UnevenCountMatchesReference) {
  SKIP_WITHOUT_GLOO();
  const Grid g = GetParam();
  auto doc = run_ok({"--nodes", std::to_string(g.nodes), "-b", "400012", "-e", "400012", "--density", g.density});
  expect_all_correct(doc, 1);
}

INSTANTIATE_TEST_SUITE_P(NodesAndDensities, GlooBaselinesExact,
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

class GlooBaselinesEdgeCases : public ::testing::TestWithParam<Case> {};

TEST_P(GlooBaselinesEdgeCases, MatchesReference) {
  SKIP_WITHOUT_GLOO();
  auto doc = run_ok(GetParam().args);
  expect_all_correct(doc, GetParam().sizes);
}

INSTANTIATE_TEST_SUITE_P(
    Configurations, GlooBaselinesEdgeCases,
    ::testing::Values(
        Case{"one_rank", {"--nodes", "1", "-b", "64K", "-e", "64K", "--density", "0.3"}},
        // Fewer elements than ranks: Gloo's chunks are mostly empty.
        Case{"fewer_elements_than_ranks", {"--nodes", "5", "-b", "12", "-e", "12", "--density", "1"}},
        // In place, the harness refills the buffer right after each call:
        // catches an algorithm that returns while its sends still read it.
        Case{"in_place_int32",
             {"--nodes", "4", "-b", "16K", "-e", "1M", "--density", "0.3", "--inplace", "-d", "int32"}, 7},
        Case{"in_place_eight_ranks", {"--nodes", "8", "-b", "256K", "-e", "256K", "--density", "0.2", "--inplace"}},
        Case{"dedicated_aggregator_ranks_stay_out",
             {"--nodes", "3", "--aggregators", "2", "-b", "256K", "-e", "256K", "--density", "0.1"}},
        // Each size rebuilds Gloo's algorithm objects on the same context.
        Case{"several_sizes", {"--nodes", "4", "-b", "4K", "-e", "4M", "-f", "32", "--density", "0.05"}, 3}),
    [](const auto& info) { return info.param.name; });

// Gloo's bcube returns before its sends to later-step peers have left the
// buffer; refilled at once (in place, across a sweep of sizes) the peers got
// the new values in about a third of such runs before our barrier.
TEST(GlooBcube, InPlaceSweepLeavesNoSendInFlight) {
  SKIP_WITHOUT_GLOO();
  const std::string json = temp_path("out.json");
  auto r = run_cli({"allreduce", "--algo", "gloo-bcube", "--nodes", "4", "-b", "4", "-e", "1M", "-n", "3", "-w", "1",
                    "--density", "0.3", "--inplace", "-T", "20", "-J", json},
                   {}, 60);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const auto& row : read_json(json)["results"])
    EXPECT_TRUE(row["correct"].get<bool>()) << row["count"] << " elements: " << row["wrong_elements"] << " wrong";
}

// The report says why wire bytes are missing and what the model expects.
TEST(GlooBaselinesReport, NotesMissingCountersAndModelsBytes) {
  SKIP_WITHOUT_GLOO();
  auto doc = run_ok({"--nodes", "4", "-b", "1M", "-e", "1M", "--density", "1"});
  expect_all_correct(doc, 1);
  for (const auto& r : doc["results"]) {
    EXPECT_TRUE(r["wire_bytes"]["sent_per_rank_max"].is_null()) << r.dump();
    EXPECT_NE(r["wire_bytes"].value("note", "").find("Gloo"), std::string::npos) << r.dump();
    const double model = r["analytic_bytes"]["sent_per_rank_max"].get<double>();
    // The ring sends the whole tensor n-1 times; the others 2(n-1)/n of it.
    const double expected = r["algo"] == "gloo-ring" ? 3.0 * (1 << 20) : 1.5 * (1 << 20);
    EXPECT_NEAR(model / expected, 1.0, 0.01) << r["algo"];
  }
}

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

// A silent peer (SIGSTOP) must not hang the others: Gloo's waits carry the
// -T timeout, and its exceptions come back as a failed run.
TEST(GlooBaselinesSilentPeer, OtherRanksFailWithinTheTimeout) {
  SKIP_WITHOUT_GLOO();
  using Clock = std::chrono::steady_clock;
  constexpr int kWorld = 3;
  constexpr int kTimeoutSeconds = 2;
  auto listener = listen_on({"127.0.0.1", 0});
  ASSERT_TRUE(listener.is_ok());
  const int port = local_address(listener.value()).value().port;
  close(listener.value());
  std::vector<std::string> args{"allreduce", "--algo", "gloo-ring", "-b", "1M", "-e", "1M", "-n", "1000000",
                                "-w", "0", "-T", std::to_string(kTimeoutSeconds), "--density", "0.1"};
  std::vector<pid_t> pids;
  for (int r = 0; r < kWorld; ++r) pids.push_back(start_rank(r, kWorld, port, args));
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  const int victim = 1;
  kill(pids[victim], SIGSTOP);
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
    EXPECT_TRUE(code == 4 || code == 6) << "rank " << r << " exited " << code << ", expected 4 (timeout) or 6";
  }
  for (pid_t p : pids) {
    kill(p, SIGKILL);
    waitpid(p, nullptr, 0);
  }
}

// Without Gloo the names still resolve: asked for alone, the run fails as
// unavailable (exit 6) and says how to get Gloo.
TEST(GlooBaselinesWithoutGloo, NamesAreKnownAndSayWhatIsMissing) {
  if (OMNIB_WITH_GLOO) GTEST_SKIP() << "this build has Gloo";
  auto r = run_cli({"allreduce", "--algo", kGlooAlgoList, "--nodes", "2", "-b", "4K", "-e", "4K"}, {}, 60);
  EXPECT_EQ(r.exit_code, 6) << r.out << r.err;
  EXPECT_NE(r.err.find("this build has no Gloo: install libgloo-dev"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace omnib
