#include <gtest/gtest.h>

#include <fstream>

#include "tests/cli_runner.h"
#include "tools/sweep/progress_bar.h"
#include "tools/sweep/sweep_plan.h"

namespace omnib {
namespace {

TEST(SweepPlan, CrossProductWithNodesOutermost) {
  SweepLists l;
  l.densities = {"0.01", "0.1", "1"};
  l.block_sizes = {"32", "256"};
  l.nodes = {"2", "4"};
  l.sizes = {1024, 4096};
  auto points = expand_sweep(l);
  ASSERT_EQ(points.size(), 12u);
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(points[i].nodes, "2");
  for (size_t i = 6; i < 12; ++i) EXPECT_EQ(points[i].nodes, "4");
  EXPECT_EQ(points[0].sizes, (std::vector<uint64_t>{1024, 4096}));
  auto args = points[0].allreduce_args({"omni", "ring"});
  EXPECT_NE(std::find(args.begin(), args.end(), "omni,ring"), args.end());
  EXPECT_NE(std::find(args.begin(), args.end(), "1024,4096"), args.end());
  EXPECT_EQ(std::find(args.begin(), args.end(), "--net"), args.end());
}

TEST(SweepPlan, LinkRatesAddEmulation) {
  SweepLists l;
  l.link_rates = {"1gbit", "10gbit"};
  l.sizes = {1024};
  auto points = expand_sweep(l);
  ASSERT_EQ(points.size(), 2u);
  auto args = points[1].allreduce_args({"omni"});
  EXPECT_NE(std::find(args.begin(), args.end(), "emulate"), args.end());
  EXPECT_NE(std::find(args.begin(), args.end(), "10gbit"), args.end());
}

TEST(SweepPlan, ResumeDropsOnlyFinishedConfigurations) {
  SweepLists l;
  l.densities = {"0.1", "0.5"};
  l.sizes = {1024, 2048};
  l.algos = {"omni", "ps"};
  auto points = expand_sweep(l);
  auto record = [](const char* algo, double density, uint64_t size) {
    return nlohmann::json{{"algo", algo},  {"density", density}, {"size_bytes", size}, {"block_size", 256},
                          {"nodes", 4},    {"overlap", "random"}, {"workload", "blocks"}};
  };
  nlohmann::json existing = nlohmann::json::array();
  existing.push_back(record("omni", 0.1, 1024));
  existing.push_back(record("ps", 0.1, 1024));   // (0.1, 1024) complete
  existing.push_back(record("omni", 0.1, 2048));  // (0.1, 2048) lacks ps
  existing.push_back(record("omni", 0.5, 1024));
  existing.push_back(record("ps", 0.5, 1024));
  existing.push_back(record("omni", 0.5, 2048));
  existing.push_back(record("ps", 0.5, 2048));    // 0.5 complete
  EXPECT_EQ(drop_finished(points, l.algos, existing), 3u);
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(points[0].density, "0.1");
  EXPECT_EQ(points[0].sizes, (std::vector<uint64_t>{2048}));
}

TEST(SweepPlan, AggregatorsFollowTheNodesOrStayFixed) {
  SweepLists l;
  l.nodes = {"2", "8"};
  l.aggregators = {"0", "nodes", "3"};
  l.sizes = {1024};
  auto points = expand_sweep(l);
  ASSERT_EQ(points.size(), 6u);
  std::vector<std::string> got;
  for (const auto& p : points) got.push_back(p.nodes + "+" + p.aggregators);
  EXPECT_EQ(got, (std::vector<std::string>{"2+0", "2+2", "2+3", "8+0", "8+8", "8+3"}));
  auto args = points[4].allreduce_args({"omni"});
  auto it = std::find(args.begin(), args.end(), "--aggregators");
  ASSERT_NE(it, args.end());
  EXPECT_EQ(*(it + 1), "8");
  EXPECT_NE(points[4].describe().find("aggregators 8"), std::string::npos) << points[4].describe();
  // Without the list, allreduce keeps its default (colocated shards).
  SweepLists plain;
  plain.sizes = {1024};
  auto plain_args = expand_sweep(plain)[0].allreduce_args({"omni"});
  EXPECT_EQ(std::find(plain_args.begin(), plain_args.end(), "--aggregators"), plain_args.end());
}

TEST(SweepPlan, AggregatorListsAreChecked) {
  EXPECT_TRUE(check_aggregator_list({"0", "nodes", "12"}).is_ok());
  for (const char* bad : {"-1", "two", "", "3x", "node"}) {
    Status s = check_aggregator_list({bad});
    EXPECT_EQ(s.code(), Code::kUsage) << bad;
    EXPECT_NE(s.message().find("nodes"), std::string::npos) << s.message();
  }
}

TEST(SweepPlan, ResumeTellsAggregatorCountsApart) {
  SweepLists l;
  l.nodes = {"4"};
  l.aggregators = {"0", "nodes"};
  l.sizes = {1024};
  l.algos = {"omni"};
  auto points = expand_sweep(l);
  nlohmann::json existing = nlohmann::json::array();
  existing.push_back({{"algo", "omni"}, {"density", 0.1}, {"size_bytes", 1024}, {"block_size", 256}, {"nodes", 4},
                      {"aggregators", 4}, {"overlap", "random"}, {"workload", "blocks"}});
  EXPECT_EQ(drop_finished(points, l.algos, existing), 1u);
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(points[0].aggregators, "0");
}

TEST(SweepPlan, PresetsKeepTheirOwnDensity) {
  SweepLists l;
  l.densities = {"0.01", "0.1"};
  l.workloads = {"blocks", "preset:vgg19"};
  l.sizes = {1024};
  auto points = expand_sweep(l, [](const std::string& w) { return w + "!"; });
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points[2].density, "");
  EXPECT_EQ(points[2].workload_label, "preset:vgg19!");
  auto args = points[2].allreduce_args({"omni"});
  EXPECT_EQ(std::find(args.begin(), args.end(), "--density"), args.end());
}

TEST(SweepPlan, SizesFromListOrRange) {
  EXPECT_EQ(sweep_sizes("1K,4K", "", "", 2).value(), (std::vector<uint64_t>{1024, 4096}));
  EXPECT_EQ(sweep_sizes("", "1K", "8K", 2).value(), (std::vector<uint64_t>{1024, 2048, 4096, 8192}));
  EXPECT_FALSE(sweep_sizes("", "8K", "1K", 2).is_ok());
  EXPECT_FALSE(sweep_sizes("1Q", "", "", 2).is_ok());
}

TEST(ProgressBar, RendersCountsElapsedAndEta) {
  std::string line = ProgressBar::render(5, 20, 10.0, "nodes 4", 10);
  EXPECT_NE(line.find("5/20"), std::string::npos) << line;
  EXPECT_NE(line.find("elapsed 10s"), std::string::npos) << line;
  EXPECT_NE(line.find("left 30s"), std::string::npos) << line;
  EXPECT_NE(line.find("[##........]"), std::string::npos) << line;
  EXPECT_EQ(ProgressBar::format_duration(3725), "1h02m");
  EXPECT_EQ(ProgressBar::format_duration(125), "2m05s");
}

TEST(SweepCommand, RunsEveryPointAndResumes) {
  std::string json = testing::temp_path("sweep.json");
  std::vector<std::string> args{"sweep", "--density", "0,0.5", "--nodes", "1,2", "--algo", "omni,ps",
                                "--sizes", "4K,16K", "-J", json, "-n", "2", "-w", "0"};
  auto r = testing::run_cli(args, {}, 180);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("\r"), std::string::npos) << "no progress bar when stderr is not a terminal";
  auto doc = testing::read_json(json);
  EXPECT_EQ(doc["results"].size(), 2u * 2 * 2 * 2);
  for (const auto& rec : doc["results"]) EXPECT_TRUE(rec["correct"].get<bool>());
  EXPECT_EQ(doc["configuration"]["allreduce_options"], (nlohmann::json{"-n", "2", "-w", "0"}));

  // Without --resume or --force the file is protected.
  auto again = testing::run_cli(args, {}, 60);
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.err.find("--resume"), std::string::npos);

  // Extend the sweep by one density: only the new points run.
  args[2] = "0,0.5,1";
  args.push_back("--resume");
  auto resumed = testing::run_cli(args, {}, 180);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("8 configuration(s) already done"), std::string::npos) << resumed.err;
  EXPECT_EQ(testing::read_json(json)["results"].size(), 3u * 2 * 2 * 2);
}

}  // namespace
}  // namespace omnib
