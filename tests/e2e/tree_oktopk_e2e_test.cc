// End-to-end: the double binary tree (`tree`) and Ok-Topk (`oktopk`) over our
// TCP transport run as real processes on loopback, must match the reference
// exactly, must put on the wire what their cost models (docs/algorithms.md)
// say, and must not hang when a peer goes silent.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/e2e_fixture.h"
#include "tests/support/rank_launcher.h"

namespace omnib {
namespace {

using testing::Case;
using testing::Grid;

const testing::AlgoFamily kFamily({"tree", "oktopk"}, 60);
// Each alone, so that its output buffer starts zeroed instead of holding the
// other's correct sum: an element it fails to write then shows.
const std::vector<testing::AlgoFamily> kEachAlone{testing::AlgoFamily({"tree"}, 60),
                                                  testing::AlgoFamily({"oktopk"}, 60)};

void expect_each_correct(const std::vector<std::string>& args, size_t sizes) {
  for (const auto& alone : kEachAlone) {
    SCOPED_TRACE(alone.list());
    alone.expect_correct(args, sizes);
  }
}

// The shared grid (3, 4 and 5 ranks) and the same densities at 2 ranks,
// where both trees are a single edge.
std::vector<Grid> two_to_five_ranks() {
  std::vector<Grid> grid;
  for (const Grid& g : testing::nodes_and_densities())
    if (g.nodes == 3) grid.push_back({2, g.density});
  for (const Grid& g : testing::nodes_and_densities()) grid.push_back(g);
  return grid;
}

class TreeOktopkExact : public ::testing::TestWithParam<Grid> {};

// 100003 elements: divides evenly by neither the ranks, the tree halves,
// the frames nor the histogram buckets.
TEST_P(TreeOktopkExact, UnevenCountMatchesReference) {
  expect_each_correct(testing::uneven_count_args(GetParam()), 1);
}

INSTANTIATE_TEST_SUITE_P(NodesAndDensities, TreeOktopkExact, ::testing::ValuesIn(two_to_five_ranks()),
                         testing::grid_name);

class TreeOktopkEdgeCases : public ::testing::TestWithParam<Case> {};

TEST_P(TreeOktopkEdgeCases, MatchesReference) { expect_each_correct(GetParam().args, GetParam().sizes); }

INSTANTIATE_TEST_SUITE_P(
    Configurations, TreeOktopkEdgeCases,
    ::testing::Values(
        Case{"one_rank", {"--nodes", "1", "-b", "64K", "-e", "64K", "--density", "0.3"}},
        // Fewer elements than ranks: empty tree halves and empty regions.
        Case{"fewer_elements_than_ranks", {"--nodes", "5", "-b", "12", "-e", "12", "--density", "1"}},
        Case{"one_element", {"--nodes", "4", "-b", "4", "-e", "4", "--density", "1"}},
        Case{"in_place_int32",
             {"--nodes", "4", "-b", "1M", "-e", "1M", "--density", "0.2", "--inplace", "-d", "int32"}},
        Case{"in_place_float", {"--nodes", "5", "-b", "1M", "-e", "1M", "--density", "0.6", "--inplace"}},
        Case{"dedicated_aggregator_ranks_stay_out",
             {"--nodes", "3", "--aggregators", "2", "-b", "256K", "-e", "256K", "--density", "0.1"}},
        Case{"disjoint_sets", {"--nodes", "4", "-b", "1M", "-e", "1M", "--density", "0.2", "--overlap", "none"}},
        // Skewed inputs: the balanced split needs its fine histogram round.
        Case{"zipf_rows", {"--nodes", "4", "-b", "4M", "-e", "4M", "--density", "0.01", "--workload", "zipf"}},
        Case{"scattered", {"--nodes", "3", "-b", "1M", "-e", "1M", "--density", "0.05", "--workload", "scattered"}},
        // Several sizes reuse one collective: sequence numbers and buffers carry over.
        Case{"several_sizes", {"--nodes", "3", "-b", "4K", "-e", "4M", "-f", "32", "--density", "0.05"}, 3}),
    testing::case_name);

// Measured bytes per rank stay within 15% of each cost model, at a sparse
// and at a dense point.
TEST(TreeOktopkWireBytes, MatchTheAnalyticModel) {
  for (const char* density : {"0.1", "1"}) {
    auto doc = kFamily.run_ok({"--nodes", "4", "-b", "4M", "-e", "4M", "--density", density});
    kFamily.expect_all_correct(doc, 1);
    for (const auto& r : doc["results"]) {
      ASSERT_TRUE(r["wire_bytes"].is_object()) << r.dump();
      for (const char* field : {"sent_per_rank_max", "sent_total"}) {
        const double measured = r["wire_bytes"][field].get<double>();
        const double model = r["analytic_bytes"][field].get<double>();
        ASSERT_GT(model, 0) << r["algo"];
        EXPECT_NEAR(measured / model, 1.0, 0.15)
            << r["algo"] << " at density " << density << ", " << field << ": measured " << measured << ", model "
            << model;
      }
    }
  }
}

// A silent peer (SIGSTOP) must not hang the others: every wait of these
// algorithms is bounded by -T. Ranks start the way torchrun would, so that
// one of them can be stopped.
class TreeOktopkSilentPeer : public ::testing::TestWithParam<std::string> {};

TEST_P(TreeOktopkSilentPeer, OtherRanksFailWithinTheTimeout) {
  constexpr int kTimeoutSeconds = 2;
  // Many iterations: the run is still going when the victim stops. Calls
  // long enough that the stop most likely lands inside one rather than in
  // the harness's barrier between calls (which times out on its own), and
  // two stops at different moments to make that likelier still.
  std::vector<std::string> args{"allreduce", "--algo", GetParam(), "-b", "8M", "-e", "8M", "-n", "1000000",
                                "-w", "0", "-T", std::to_string(kTimeoutSeconds), "--density", "0.1"};
  for (int settle_ms : {1000, 1700}) {
    // The wait in progress, one more for a store wait, and slack for 2 cores.
    const testing::PeerHit hit{.world = 4, .victim = 2, .signal = SIGSTOP,
                               .settle = std::chrono::milliseconds(settle_ms),
                               .grace = std::chrono::seconds(2 * kTimeoutSeconds + 5)};
    for (const auto& [rank, code] : testing::hit_one_rank(args, hit)) {
      EXPECT_NE(code, -1) << "rank " << rank << " still running after the timeout (stopped after " << settle_ms
                          << " ms)";
      EXPECT_NE(code, 0) << "rank " << rank;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Algorithms, TreeOktopkSilentPeer, ::testing::ValuesIn(kFamily.algos()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace omnib
