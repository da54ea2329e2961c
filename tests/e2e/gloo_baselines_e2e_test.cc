// End-to-end: the Gloo baselines (gloo-ring, gloo-ring-chunked,
// gloo-halving-doubling, gloo-bcube) run as real processes over Gloo's own
// TCP transport and rendezvous through our store, and must match the
// reference exactly. A build without Gloo must still know the names.
#include <gtest/gtest.h>

#include <filesystem>

#include <string>
#include <vector>

#include "tests/support/cli_runner.h"
#include "tests/support/e2e_fixture.h"
#include "tests/support/rank_launcher.h"
#include "engine/build_features.h"

namespace omnib {
namespace {

using testing::Case;
using testing::Grid;
using testing::read_json;
using testing::run_cli;
using testing::temp_path;

const testing::AlgoFamily kGloo({"gloo-ring", "gloo-ring-chunked", "gloo-halving-doubling", "gloo-bcube"}, 60);

#define SKIP_WITHOUT_GLOO() \
  if (!OMNIB_WITH_GLOO) GTEST_SKIP() << "this build has no Gloo (install libgloo-dev and rebuild)"

class GlooBaselinesExact : public ::testing::TestWithParam<Grid> {};

// 400012 bytes = 100003 elements, a prime: no chunking of Gloo's divides
// it evenly.
TEST_P(GlooBaselinesExact, UnevenCountMatchesReference) {
  SKIP_WITHOUT_GLOO();
  kGloo.expect_correct(testing::uneven_count_args(GetParam()), 1);
}

INSTANTIATE_TEST_SUITE_P(NodesAndDensities, GlooBaselinesExact, ::testing::ValuesIn(testing::nodes_and_densities()),
                         testing::grid_name);

class GlooBaselinesEdgeCases : public ::testing::TestWithParam<Case> {};

TEST_P(GlooBaselinesEdgeCases, MatchesReference) {
  SKIP_WITHOUT_GLOO();
  kGloo.expect_correct(GetParam().args, GetParam().sizes);
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
    testing::case_name);

// With --transport fabric on a host without a verbs device the Gloo
// baselines stay on Gloo's TCP transport, and the report says so.
TEST(GlooTransportChoice, FabricWithoutVerbsStaysOnGloosTcpAndSaysSo) {
  SKIP_WITHOUT_GLOO();
  if (!OMNIB_WITH_LIBFABRIC) GTEST_SKIP() << "this build has no libfabric";
  auto doc = kGloo.run_ok({"--nodes", "2", "-b", "64K", "-e", "64K", "--transport", "fabric", "--fabric-provider",
                           "tcp"});
  kGloo.expect_all_correct(doc, 1);
  const bool verbs_here = std::filesystem::exists("/sys/class/infiniband") &&
                          !std::filesystem::is_empty("/sys/class/infiniband");
  for (const auto& r : doc["results"])
    EXPECT_NE(r["note"].get<std::string>().find(verbs_here ? "Gloo ibverbs transport" : "Gloo TCP transport"),
              std::string::npos)
        << r.dump();
}

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
  const auto doc = read_json(json);
  for (const auto& row : doc["results"])
    EXPECT_TRUE(row["correct"].get<bool>()) << row["count"] << " elements: " << row["wrong_elements"] << " wrong";
}

// The report says why wire bytes are missing and what the model expects.
TEST(GlooBaselinesReport, NotesMissingCountersAndModelsBytes) {
  SKIP_WITHOUT_GLOO();
  auto doc = kGloo.run_ok({"--nodes", "4", "-b", "1M", "-e", "1M", "--density", "1"});
  kGloo.expect_all_correct(doc, 1);
  for (const auto& r : doc["results"]) {
    EXPECT_TRUE(r["wire_bytes"]["sent_per_rank_max"].is_null()) << r.dump();
    EXPECT_NE(r["wire_bytes"].value("note", "").find("Gloo"), std::string::npos) << r.dump();
    const double model = r["analytic_bytes"]["sent_per_rank_max"].get<double>();
    // The ring sends the whole tensor n-1 times; the others 2(n-1)/n of it.
    const double expected = r["algo"] == "gloo-ring" ? 3.0 * (1 << 20) : 1.5 * (1 << 20);
    EXPECT_NEAR(model / expected, 1.0, 0.01) << r["algo"];
  }
}

// A silent peer (SIGSTOP) must not hang the others: Gloo's waits carry the
// -T timeout, and its exceptions come back as a failed run.
TEST(GlooBaselinesSilentPeer, OtherRanksFailWithinTheTimeout) {
  SKIP_WITHOUT_GLOO();
  constexpr int kTimeoutSeconds = 2;
  std::vector<std::string> args{"allreduce", "--algo", "gloo-ring", "-b", "1M", "-e", "1M", "-n", "1000000",
                                "-w", "0", "-T", std::to_string(kTimeoutSeconds), "--density", "0.1"};
  const testing::PeerHit hit{.world = 3, .victim = 1, .signal = SIGSTOP, .settle = std::chrono::milliseconds(1000),
                             .grace = std::chrono::seconds(2 * kTimeoutSeconds + 5)};
  for (const auto& [rank, code] : testing::hit_one_rank(args, hit)) {
    EXPECT_NE(code, -1) << "rank " << rank << " still running after the timeout";
    EXPECT_TRUE(code == 4 || code == 6) << "rank " << rank << " exited " << code << ", expected 4 (timeout) or 6";
  }
}

// Without Gloo the names still resolve: asked for alone, the run fails as
// unavailable (exit 6) and says how to get Gloo.
TEST(GlooBaselinesWithoutGloo, NamesAreKnownAndSayWhatIsMissing) {
  if (OMNIB_WITH_GLOO) GTEST_SKIP() << "this build has Gloo";
  auto r = run_cli({"allreduce", "--algo", kGloo.list(), "--nodes", "2", "-b", "4K", "-e", "4K"}, {}, 60);
  EXPECT_EQ(r.exit_code, 6) << r.out << r.err;
  EXPECT_NE(r.err.find("this build has no Gloo: install libgloo-dev"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace omnib
