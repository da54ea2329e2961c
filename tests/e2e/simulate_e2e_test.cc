// `omni-bench simulate` run as the real binary: it writes the records
// `allreduce` writes, marked simulated, that compare and plot read; a ring
// on a star of unshared links takes what its busiest link's bytes take; and
// what it cannot do is a usage error or, without SimGrid, "unavailable".
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "engine/build_features.h"
#include "tests/support/cli_runner.h"

namespace omnib {
namespace {

using nlohmann::json;

constexpr int kSimulateLimitSeconds = 300;

#if OMNIB_WITH_SIMGRID

TEST(SimulateCommand, WritesSimulatedRecordsThatCompareAndPlotRead) {
  const std::string path = testing::temp_path("simulated.json");
  auto r = testing::run_cli({"simulate", "--algo", "omni,ring,tree,allgather,sparcml-split,oktopk,gloo-ring", "--nodes", "4",
                             "-b", "1M", "-e", "1M", "--density", "0.1", "--link-rate", "100mbit", "-J", path},
                            {}, kSimulateLimitSeconds);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json doc = testing::read_json(path);
  EXPECT_EQ(doc["schema_version"], 7);
  EXPECT_TRUE(doc["environment"]["simulator"].get<std::string>().starts_with("SimGrid"));
  ASSERT_EQ(doc["results"].size(), 7u);
  for (const json& rec : doc["results"]) {
    EXPECT_TRUE(rec["simulated"].get<bool>()) << rec["algo"];
    EXPECT_EQ(rec["config"]["net"], "simulate");
    EXPECT_EQ(rec["config"]["topology"], "star");
    EXPECT_EQ(rec["config"]["link_rate_bps"], 100'000'000u);
    if (rec["algo"] == "gloo-ring") {  // no schedule: skipped, saying which have one
      EXPECT_TRUE(rec["skipped"].get<bool>());
      EXPECT_NE(rec["skip_reason"].get<std::string>().find("no message schedule"), std::string::npos);
      continue;
    }
    EXPECT_GT(rec["time_us"]["median"].get<double>(), 0) << rec["algo"];
    // The simulated wire carries exactly the modelled bytes.
    EXPECT_EQ(rec["wire_bytes"]["sent_total"], rec["analytic_bytes"]["sent_total"]) << rec["algo"];
    if (rec["algo"] == "ring") {
      // Every link carries the busiest rank's bytes once, at 12.5 MB/s.
      const double limit_us = rec["wire_bytes"]["sent_per_rank_max"].get<double>() / 12.5;
      EXPECT_NEAR(rec["time_us"]["median"].get<double>(), limit_us, 0.01 * limit_us);
    }
  }
  auto same = testing::run_cli({"compare", path, path});
  EXPECT_EQ(same.exit_code, 0) << same.out << same.err;
  const std::string figures = testing::temp_path("figures");
  auto plot = testing::run_cli({"plot", path, "-o", figures}, {}, 600);
  if (plot.exit_code != 6) EXPECT_EQ(plot.exit_code, 0) << plot.err;
}

TEST(SimulateCommand, SizesAFatTreeToTheJob) {
  const std::string path = testing::temp_path("tree.json");
  auto r = testing::run_cli({"simulate", "--algo", "ring,omni", "--nodes", "64", "-b", "256K", "-e", "256K",
                             "--link-rate", "100gbit", "--link-delay", "1us", "--topology", "fat-tree:16", "-J", path},
                            {}, kSimulateLimitSeconds);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json doc = testing::read_json(path);
  for (const json& rec : doc["results"]) {
    EXPECT_EQ(rec["config"]["topology"], "fat-tree:2;16,4;1,16;1,1");
    // 64 workers each sending to 16 shards at once are more flows than the
    // simulator lets fly: omni's fan-outs are paced, and the note says so.
    if (rec["algo"] == "omni") EXPECT_NE(rec["note"].get<std::string>().find("paced"), std::string::npos) << rec["note"];
  }
}

TEST(SimulateCommand, RefusesWhatItCannotSimulate) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"simulate", "--net", "emulate"},
           {"simulate", "--topology", "ring"},
           {"simulate", "--nodes", "6", "--topology", "fat-tree:4"},
           {"simulate", "--nodes", "6", "--topology", "torus:2,2"},
           {"simulate", "--calibration", "/nonexistent/calibration.json"}}) {
    auto r = testing::run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << args[1] << " " << args[2] << ": " << r.err;
    EXPECT_NE(r.err.find("omni-bench simulate:"), std::string::npos) << r.err;
  }
}

#else

TEST(SimulateCommand, SaysThisBuildLacksSimGrid) {
  auto r = testing::run_cli({"simulate", "--nodes", "4"});
  EXPECT_EQ(r.exit_code, 6);
  EXPECT_NE(r.err.find("lacks SimGrid"), std::string::npos) << r.err;
}

#endif

}  // namespace
}  // namespace omnib
