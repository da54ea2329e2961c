// `omni-bench simulate` run as the real binary: it writes the records
// `allreduce` writes, marked simulated, that compare and plot read; a ring
// on a star of unshared links takes what its busiest link's bytes take; and
// what it cannot do is a usage error or, without SimGrid, "unavailable".
#include <gtest/gtest.h>

#include <chrono>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "engine/build_features.h"
#include "tools/net/command_runner.h"
#include "tools/net/net_requirements.h"
#include "tools/record/result_record.h"
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
  EXPECT_EQ(doc["schema_version"], kSchemaVersion);
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

// sweep --simulate: every point simulated, resumable like any sweep.
TEST(SimulateCommand, SweepsSimulatedNodeCounts) {
  const std::string path = testing::temp_path("simulated-sweep.json");
  const std::vector<std::string> args{"sweep", "--simulate", "--nodes", "2,16", "--algo", "ring,omni", "--density",
                                      "0.01", "--sizes", "256K", "--link-rate", "10gbit", "--topology", "fat-tree",
                                      "-J", path};
  auto r = testing::run_cli(args, {}, kSimulateLimitSeconds);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json doc = testing::read_json(path);
  ASSERT_EQ(doc["results"].size(), 4u);
  for (const json& rec : doc["results"]) {
    EXPECT_TRUE(rec["simulated"].get<bool>());
    EXPECT_EQ(rec["config"]["net"], "simulate");
    EXPECT_EQ(rec["config"]["link_rate_bps"], 10'000'000'000u);
  }
  EXPECT_EQ(doc["results"][2]["config"]["nodes"], 16);
  // Ring's time grows with the node count at a fixed size (2(n-1)/n of it).
  EXPECT_GT(doc["results"][2]["time_us"]["median"].get<double>(), doc["results"][0]["time_us"]["median"].get<double>());
  std::vector<std::string> again = args;
  again.push_back("--resume");
  auto resumed = testing::run_cli(again, {}, kSimulateLimitSeconds);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("2 configuration(s) already done"), std::string::npos) << resumed.err;
  auto both = testing::run_cli({"sweep", "--simulate", "--net", "emulate", "-J", testing::temp_path("no.json")});
  EXPECT_EQ(both.exit_code, 2) << both.err;
  // The fat tree is sized to each node count, yet the node counts make one
  // line of time against nodes.
  const std::string figures = testing::temp_path("simulated-figures");
  auto plot = testing::run_cli({"plot", path, "-o", figures}, {}, 600);
  if (plot.exit_code == 6) GTEST_SKIP() << "no matplotlib here: " << plot.err;
  ASSERT_EQ(plot.exit_code, 0) << plot.err;
  EXPECT_TRUE(std::filesystem::exists(figures + "/time_vs_nodes.png")) << plot.out;
}

// --against wants emulated measurements; a simulated file has none.
TEST(SimulateCommand, ValidatesOnlyAgainstEmulatedRuns) {
  const std::string path = testing::temp_path("not-emulated.json");
  ASSERT_EQ(testing::run_cli({"simulate", "--nodes", "2", "-b", "64K", "-e", "64K", "--algo", "ring", "-J", path}).exit_code,
            0);
  auto r = testing::run_cli({"simulate", "--against", path});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("no emulated measurement"), std::string::npos) << r.err;
}

// A real emulated run, simulated again and fitted: ring on two ranks is the
// link's rate times the share of its bytes that are payload, so the fitted
// bandwidth factor lands near the payload's share (0.95 with TCP/IP headers
// and acknowledgements).
TEST(SimulateCommand, HoldsItselfAgainstAnEmulatedRunAndFitsIt) {
  if (!has_net_admin_privileges() || find_tool("ip").empty() || find_tool("tc").empty())
    GTEST_SKIP() << "emulated links need root (CAP_NET_ADMIN) and iproute2";
  const std::string emulated = testing::temp_path("emulated.json");
  auto run = testing::run_cli({"allreduce", "--net", "emulate", "--link-rate", "50mbit", "--nodes", "2", "-b", "1M",
                               "-e", "1M", "--algo", "ring,allgather", "--density", "0.1", "-n", "5", "-w", "1", "-J",
                               emulated},
                              {}, kSimulateLimitSeconds);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto against = testing::run_cli({"simulate", "--against", emulated}, {}, kSimulateLimitSeconds);
  ASSERT_EQ(against.exit_code, 0) << against.err;
  EXPECT_NE(against.out.find("sim/emu"), std::string::npos) << against.out;
  EXPECT_NE(against.out.find("# verdict:"), std::string::npos) << against.out;

  const std::string calibration = testing::temp_path("calibration.json");
  auto fit = testing::run_cli({"simulate", "--calibrate", calibration, "--against", emulated}, {},
                              kSimulateLimitSeconds);
  if (fit.exit_code == 2 && fit.err.find("nothing to fit") != std::string::npos)
    GTEST_SKIP() << "this host starved both ranks, or the links lost packets: " << fit.err;
  ASSERT_EQ(fit.exit_code, 0) << fit.err;
  const json c = testing::read_json(calibration);
  const double factor = c["network"]["bandwidth_factor"].get<double>();
  EXPECT_GT(factor, 0.85) << fit.out;
  EXPECT_LT(factor, 1.05) << fit.out;
  EXPECT_GE(c["fit"]["points"].get<int>(), 1);
  EXPECT_NE(c["made_by"]["command"].get<std::string>().find("--calibrate"), std::string::npos);
  // It refuses to overwrite what it wrote.
  EXPECT_EQ(testing::run_cli({"simulate", "--calibrate", calibration, "--against", emulated}).exit_code, 2);
}

// A point that simulates for longer than --point-timeout is stopped, not
// waited for: sparcml-split's all-to-all at 1024 workers takes about 21 s of
// simulation on a 2-core host; at a limit of 1 s the command fails with a
// timeout that names the option, long before the simulation would end.
TEST(SimulateCommand, APointPastItsTimeoutIsStopped) {
  const auto start = std::chrono::steady_clock::now();
  auto r = testing::run_cli({"simulate", "--nodes", "1024", "--algo", "sparcml-split", "-b", "1M", "-e", "1M",
                             "--link-rate", "100gbit", "--topology", "fat-tree", "--point-timeout", "1"},
                            {}, kSimulateLimitSeconds);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(r.err.find("--point-timeout"), std::string::npos) << r.err;
  EXPECT_LT(took, 15.0);
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
