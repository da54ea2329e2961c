// End-to-end: the CPU baselines over our TCP transport (ring, allgather,
// sparcml-split, sparcml-recdbl) run as real processes on loopback, must
// match the reference exactly, and must put on the wire what their cost
// models (docs/algorithms.md) say.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/e2e_fixture.h"
#include "tests/support/rank_launcher.h"

namespace omnib {
namespace {

using testing::Case;
using testing::Grid;

const testing::AlgoFamily kCpu({"ring", "allgather", "sparcml-split", "sparcml-recdbl"}, 60);

class CpuBaselinesExact : public ::testing::TestWithParam<Grid> {};

// 400012 bytes = 100003 elements: a prime, so it divides evenly by neither the
// node count, the block size, nor the frame size.
TEST_P(CpuBaselinesExact, UnevenCountMatchesReference) {
  kCpu.expect_correct(testing::uneven_count_args(GetParam()), 1);
}

INSTANTIATE_TEST_SUITE_P(NodesAndDensities, CpuBaselinesExact, ::testing::ValuesIn(testing::nodes_and_densities()),
                         testing::grid_name);

class CpuBaselinesEdgeCases : public ::testing::TestWithParam<Case> {};

TEST_P(CpuBaselinesEdgeCases, MatchesReference) {
  kCpu.expect_correct(GetParam().args, GetParam().sizes);
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
    testing::case_name);

// Measured bytes per rank stay within 15% of each cost model.
TEST(CpuBaselinesWireBytes, MatchTheAnalyticModel) {
  auto doc = kCpu.run_ok({"--nodes", "4", "-b", "4M", "-e", "4M", "--density", "0.1"});
  kCpu.expect_all_correct(doc, 1);
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

TEST_P(CpuBaselinesSilentPeer, OtherRanksFailWithinTheTimeout) {
  constexpr int kTimeoutSeconds = 2;
  // Many iterations: the run is still going when the victim stops.
  std::vector<std::string> args{"allreduce", "--algo", GetParam(), "-b", "1M", "-e", "1M", "-n", "1000000",
                                "-w", "0", "-T", std::to_string(kTimeoutSeconds), "--density", "0.1"};
  // The wait in progress, one more for a store wait, and slack for 2 cores.
  const testing::PeerHit hit{.world = 3, .victim = 1, .signal = SIGSTOP, .settle = std::chrono::milliseconds(1000),
                             .grace = std::chrono::seconds(2 * kTimeoutSeconds + 5)};
  for (const auto& [rank, code] : testing::hit_one_rank(args, hit)) {
    EXPECT_NE(code, -1) << "rank " << rank << " still running after the timeout";
    EXPECT_NE(code, 0) << "rank " << rank;
  }
}

INSTANTIATE_TEST_SUITE_P(Algorithms, CpuBaselinesSilentPeer, ::testing::ValuesIn(kCpu.algos()), [](const auto& info) {
  std::string name = info.param;
  for (auto& ch : name)
    if (ch == '-') ch = '_';
  return name;
});

}  // namespace
}  // namespace omnib
