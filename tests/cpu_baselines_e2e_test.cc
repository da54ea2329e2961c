// End-to-end: the CPU baselines over our TCP transport (ring, allgather,
// sparcml-split, sparcml-recdbl) run as real processes on loopback, must
// match the reference exactly, and must put on the wire what their cost
// models (docs/algorithms.md) say.
#include <gtest/gtest.h>

#include <string>
#include <vector>

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
                         ::testing::Values(Grid{3, "0"}, Grid{3, "0.01"}, Grid{3, "0.5"}, Grid{3, "1"},
                                           Grid{4, "0"}, Grid{4, "0.01"}, Grid{4, "0.5"}, Grid{4, "1"},
                                           Grid{5, "0"}, Grid{5, "0.01"}, Grid{5, "0.5"}, Grid{5, "1"}),
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
        Case{"in_place_int32", {"--nodes", "4", "-b", "1M", "-e", "1M", "--density", "0.2", "--inplace", "-d", "int32"}},
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

}  // namespace
}  // namespace omnib
