#include <gtest/gtest.h>

#include <set>

#include <algorithm>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "tests/support/cli_runner.h"
#include "tools/common/comma_list.h"
#include "tools/sweep/progress_bar.h"
#include "tools/sweep/sweep_plan.h"

namespace omnib {
namespace {

bool has(const std::vector<std::string>& args, const std::string& item) {
  return std::find(args.begin(), args.end(), item) != args.end();
}

std::vector<SweepPoint> expand_ok(const SweepLists& l) {
  auto points = expand_sweep(l);
  EXPECT_TRUE(points.is_ok()) << points.status().message();
  return points.is_ok() ? points.take() : std::vector<SweepPoint>{};
}

// A finished record of `algo` at `point`'s k-th size.
ResultRecord finished(const SweepPoint& point, size_t k, const std::string& algo) {
  ResultRecord r;
  r.algo = algo;
  r.config = point.plan.config(k);
  return r;
}

TEST(SweepPlan, CrossProductWithNodesOutermost) {
  SweepLists l;
  l.densities = {"0.01", "0.1", "1"};
  l.block_sizes = {"32", "256"};
  l.nodes = {"2", "4"};
  l.size_args = {"--sizes", "1K,4K"};
  l.algos = {"omni", "ring"};
  auto points = expand_ok(l);
  ASSERT_EQ(points.size(), 12u);
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(points[i].plan.base.nodes, 2);
  for (size_t i = 6; i < 12; ++i) EXPECT_EQ(points[i].plan.base.nodes, 4);
  EXPECT_EQ(points[0].todo, (std::vector<uint64_t>{1024, 4096}));
  auto args = points[0].allreduce_args("part.json");
  EXPECT_TRUE(has(args, "omni,ring"));
  EXPECT_TRUE(has(args, "1024,4096"));
  EXPECT_FALSE(has(args, "--net"));
}

TEST(SweepPlan, LinkRatesAreConfigurationsOfTheirOwn) {
  SweepLists l;
  l.link_rates = {"50mbit", "100mbit"};
  l.size_args = {"--sizes", "1K"};
  auto points = expand_ok(l);
  ASSERT_EQ(points.size(), 2u);
  auto args = points[1].allreduce_args("part.json");
  EXPECT_EQ(std::count(args.begin(), args.end(), "--net"), 1);
  EXPECT_TRUE(has(args, "100mbit"));
  EXPECT_EQ(points[0].plan.config(0).link_rate_bps, 50'000'000u);
  EXPECT_EQ(points[1].plan.config(0).link_rate_bps, 100'000'000u);
  EXPECT_NE(points[0].plan.config(0).key_text(), points[1].plan.config(0).key_text());
}

TEST(SweepPlan, ElementTypesAndEncodingsAreAxes) {
  SweepLists l;
  l.datatypes = {"float", "bf16"};
  l.encodings = {"blocks", "coo"};
  l.size_args = {"--sizes", "4K"};
  auto points = expand_ok(l);
  ASSERT_EQ(points.size(), 4u);
  std::set<std::string> keys;
  for (const auto& p : points) keys.insert(p.plan.config(0).key_text());
  EXPECT_EQ(keys.size(), 4u);
  EXPECT_EQ(points[1].plan.config(0).dtype, DType::kFloat32);
  EXPECT_EQ(points[1].plan.config(0).encoding, EncodingPolicy::kCoo);
  EXPECT_EQ(points[2].plan.config(0).dtype, DType::kBFloat16);
  EXPECT_EQ(points[2].plan.config(0).encoding, EncodingPolicy::kBlocks);
  EXPECT_NE(points[3].description.find("bf16, encoding coo"), std::string::npos) << points[3].description;
}

TEST(SweepPlan, ANetGivenToTheSweepIsPassedOnce) {
  SweepLists l;
  l.emulate = true;  // `sweep --net emulate --link-rate ...`
  l.link_rates = {"50mbit"};
  l.size_args = {"--sizes", "1K"};
  auto points = expand_ok(l);
  ASSERT_EQ(points.size(), 1u);
  auto args = points[0].allreduce_args("part.json");
  EXPECT_EQ(std::count(args.begin(), args.end(), "--net"), 1);
}

TEST(SweepPlan, APointAllreduceWouldRefuseStopsTheSweepUpFront) {
  SweepLists l;
  l.densities = {"0.1", "2"};
  l.size_args = {"--sizes", "1K"};
  auto points = expand_sweep(l);
  ASSERT_FALSE(points.is_ok());
  EXPECT_EQ(points.status().code(), Code::kUsage);
  EXPECT_NE(points.status().message().find("density 2"), std::string::npos) << points.status().message();
}

TEST(SweepPlan, TraceFilesAreForSingleRunsButProfilesPassThrough) {
  SweepLists l;
  l.size_args = {"--sizes", "1K"};
  l.passthrough = {"--trace", "t.json"};
  auto points = expand_sweep(l);
  ASSERT_FALSE(points.is_ok());
  EXPECT_EQ(points.status().code(), Code::kUsage);
  EXPECT_NE(points.status().message().find("allreduce --trace"), std::string::npos) << points.status().message();
  l.passthrough = {"--profile"};
  auto profiled = expand_ok(l);
  ASSERT_EQ(profiled.size(), 1u);
  EXPECT_TRUE(profiled[0].plan.trace.profile);
  EXPECT_TRUE(has(profiled[0].allreduce_args("part.json"), "--profile"));
}

TEST(SweepPlan, ResumeDropsOnlyFinishedConfigurations) {
  SweepLists l;
  l.densities = {"0.1", "0.5"};
  l.size_args = {"--sizes", "1K,2K"};
  l.algos = {"omni", "ps"};
  auto points = expand_ok(l);
  ASSERT_EQ(points.size(), 2u);
  std::vector<ResultRecord> existing = {
      finished(points[0], 0, "omni"), finished(points[0], 0, "ps"),  // (0.1, 1K) complete
      finished(points[0], 1, "omni"),                                 // (0.1, 2K) lacks ps
      finished(points[1], 0, "omni"), finished(points[1], 0, "ps"),
      finished(points[1], 1, "omni"), finished(points[1], 1, "ps"),  // 0.5 complete
  };
  EXPECT_EQ(drop_finished(points, finished_keys(existing)), 3u);
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(points[0].plan.base.density, 0.1);
  EXPECT_EQ(points[0].todo, (std::vector<uint64_t>{2048}));
}

// A --duration checkpoint of a configuration still running is not
// finished: the resume runs it again and drops the partial records.
TEST(SweepPlan, ResumeRunsACheckpointedConfigurationAgain) {
  SweepLists l;
  l.size_args = {"--sizes", "1K,2K"};
  l.algos = {"omni"};
  auto points = expand_ok(l);
  ASSERT_EQ(points.size(), 1u);
  std::vector<ResultRecord> existing = {finished(points[0], 0, "omni"), finished(points[0], 1, "omni")};
  existing[0].duration = DurationOutcome{60, 60.1, 5000, true, true};
  existing[1].duration = DurationOutcome{60, 20.0, 1700, false, true};
  EXPECT_EQ(drop_finished(points, finished_keys(existing)), 1u);
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(points[0].todo, (std::vector<uint64_t>{2048}));
  EXPECT_EQ(drop_unfinished(existing), 1u);
  ASSERT_EQ(existing.size(), 1u);
  EXPECT_EQ(existing[0].config.size_bytes, 1024u);
}

// Sizes are parsed once, by allreduce's own rules (whole elements): a resume
// finds what the run wrote, odd sizes included.
TEST(SweepPlan, OddSizesResumeByTheSizeTheRunWrote) {
  SweepLists l;
  l.size_args = {"--sizes", "1000001"};
  auto points = expand_ok(l);
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(points[0].todo, (std::vector<uint64_t>{1000000}));
  std::vector<ResultRecord> existing = {finished(points[0], 0, "omni")};
  EXPECT_EQ(drop_finished(points, finished_keys(existing)), 1u);
  EXPECT_TRUE(points.empty());
}

TEST(SweepPlan, AggregatorsFollowTheNodesOrStayFixed) {
  SweepLists l;
  l.nodes = {"2", "8"};
  l.aggregators = {"0", "nodes", "3"};
  l.size_args = {"--sizes", "1K"};
  auto points = expand_ok(l);
  ASSERT_EQ(points.size(), 6u);
  std::vector<std::string> got;
  for (const auto& p : points)
    got.push_back(std::to_string(p.plan.base.nodes) + "+" + std::to_string(p.plan.base.aggregators));
  EXPECT_EQ(got, (std::vector<std::string>{"2+0", "2+2", "2+3", "8+0", "8+8", "8+3"}));
  EXPECT_NE(points[4].description.find("aggregators 8"), std::string::npos) << points[4].description;
  // Without the list, allreduce keeps its default (colocated shards).
  SweepLists plain;
  plain.size_args = {"--sizes", "1K"};
  EXPECT_FALSE(has(expand_ok(plain)[0].allreduce_args("p.json"), "--aggregators"));
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
  l.aggregators = {"0", "nodes"};
  l.size_args = {"--sizes", "1K"};
  auto points = expand_ok(l);
  ASSERT_EQ(points.size(), 2u);
  std::vector<ResultRecord> existing = {finished(points[1], 0, "omni")};
  EXPECT_EQ(drop_finished(points, finished_keys(existing)), 1u);
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(points[0].plan.base.aggregators, 0);
}

TEST(SweepPlan, PresetsKeepTheirOwnDensity) {
  SweepLists l;
  l.densities = {"0.01", "0.1"};
  l.workloads = {"blocks", "preset:vgg19"};
  l.size_args = {"--sizes", "1K"};
  auto points = expand_ok(l);
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points[2].plan.base.workload, "preset:vgg19");
  EXPECT_FALSE(has(points[2].allreduce_args("p.json"), "--density"));
}

// 1000 densities x 1000 block sizes: refused by count before any point is
// planned (planning them took minutes and over a gigabyte).
std::string numbers(int n, double step) {
  std::string out;
  for (int i = 1; i <= n; ++i) out += (out.empty() ? "" : ",") + std::to_string(step * i);
  return out;
}

TEST(SweepPlan, TooManyPointsAreRefusedBeforePlanning) {
  SweepLists l;
  l.densities = split_list(numbers(1000, 0.0001));
  l.block_sizes = split_list(numbers(1000, 16));
  EXPECT_EQ(count_sweep_points(l), 1000000u);
  const Status s = check_sweep_size(l);
  EXPECT_EQ(s.code(), Code::kUsage);
  EXPECT_NE(s.message().find("1000000 points"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("at most 10000"), std::string::npos) << s.message();
  // At the limit it plans; workloads that fix their density count once.
  l.block_sizes = split_list(numbers(10, 16));
  EXPECT_TRUE(check_sweep_size(l).is_ok());
  l.workloads = {"blocks", "preset:bert-squad"};
  EXPECT_EQ(count_sweep_points(l), 10010u);
  // Lists whose product overflows 64 bits saturate instead of wrapping.
  l.nodes = l.overlaps = l.datatypes = std::vector<std::string>(1u << 16, "4");
  l.block_sizes = std::vector<std::string>(1u << 16, "256");
  EXPECT_EQ(count_sweep_points(l), UINT64_MAX);
  EXPECT_NE(check_sweep_size(l).message().find("more than 2^64"), std::string::npos);
}

TEST(SweepCommand, ASweepTooBigToPlanIsRefusedAtOnce) {
  auto r = testing::run_cli({"sweep", "--density", numbers(1000, 0.0001), "--block-size", numbers(1000, 16),
                             "--nodes", "2", "--sizes", "64K", "-J", testing::temp_path("big.json")},
                            {}, 30);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("a sweep runs at most 10000"), std::string::npos) << r.err;
  EXPECT_LT(r.seconds, 10);
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
  std::vector<std::string> args{"sweep", "--density", "0.1,0.5", "--nodes", "1,2", "--algo", "omni,ps",
                                "--sizes", "4K,16K", "-J", json, "-n", "2", "-w", "0"};
  auto r = testing::run_cli(args, {}, 180);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("\r"), std::string::npos) << "no progress bar when stderr is not a terminal";
  auto doc = testing::read_json(json);
  EXPECT_EQ(doc["results"].size(), 2u * 2 * 2 * 2);
  for (const auto& rec : doc["results"]) EXPECT_TRUE(rec["correct"].get<bool>());
  EXPECT_EQ(doc["configuration"]["allreduce_options"], (nlohmann::json{"-n", "2", "-w", "0"}));
  EXPECT_TRUE(doc.contains("identity_fields"));

  // Without --resume or --force the file is protected.
  auto again = testing::run_cli(args, {}, 60);
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.err.find("--resume"), std::string::npos);

  // Extend the sweep by one density: only the new points run.
  args[2] = "0.1,0.5,1";
  args.push_back("--resume");
  auto resumed = testing::run_cli(args, {}, 180);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("8 configuration(s) already done"), std::string::npos) << resumed.err;
  EXPECT_EQ(testing::read_json(json)["results"].size(), 3u * 2 * 2 * 2);
}

TEST(SweepCommand, OddSizesResumeWithoutRerunning) {
  std::string json = testing::temp_path("odd.json");
  std::vector<std::string> args{"sweep", "--nodes", "2", "--sizes", "1000001", "-J", json, "-n", "1", "-w", "0"};
  ASSERT_EQ(testing::run_cli(args, {}, 120).exit_code, 0);
  args.push_back("--resume");
  auto resumed = testing::run_cli(args, {}, 60);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("1 configuration(s) already done"), std::string::npos) << resumed.err;
  EXPECT_NE(resumed.err.find("0 configuration(s) run"), std::string::npos) << resumed.err;
  EXPECT_EQ(testing::read_json(json)["results"].size(), 1u);
}

// SIGTERM stops the point in progress and leaves the JSON whole: the points
// that finished are in it, it says it is not complete (so that nobody takes
// it for a finished sweep; --resume goes on from it), and no rank is left
// running.
TEST(SweepCommand, SigtermStopsThePointAndKeepsTheJson) {
  const std::string json = testing::temp_path("stopped.json");
  const std::string err = testing::temp_path("stderr.txt");
  const std::string binary = testing::omni_bench_binary();
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    freopen("/dev/null", "w", stdout);
    freopen(err.c_str(), "w", stderr);
    // The first point (one rank) is quick, the second runs until it is stopped.
    execl(binary.c_str(), binary.c_str(), "sweep", "--nodes", "1,3", "--density", "0.1", "--sizes", "1M", "-J",
          json.c_str(), "-n", "3", "-w", "0", "--algo", "ring", "--repeat", "1000", static_cast<char*>(nullptr));
    _exit(127);
  }
  // Wait for the first size's records, then stop the sweep.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  bool first_done = false;
  while (!first_done && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const std::string text = testing::slurp(json);
    first_done = text.find("\"size_bytes\": 1048576") != std::string::npos;
  }
  ASSERT_TRUE(first_done) << testing::slurp(err);
  kill(pid, SIGTERM);
  int status = 0;
  const auto stop = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (waitpid(pid, &status, WNOHANG) == 0 && std::chrono::steady_clock::now() < stop)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  kill(-pid, SIGKILL);  // nothing should be left; if something is, the check below says so
  EXPECT_TRUE(WIFEXITED(status)) << "still running or killed";
  EXPECT_EQ(WEXITSTATUS(status), 143) << testing::slurp(err);
  const auto doc = testing::read_json(json);
  EXPECT_EQ(doc["complete"], false);
  ASSERT_EQ(doc["results"].size(), 1u);
  EXPECT_EQ(doc["results"][0]["config"]["nodes"], 1);
  EXPECT_NE(testing::slurp(err).find("stopped by signal 15; 1 configuration(s) finished"), std::string::npos)
      << testing::slurp(err);
}

// A file that is not a result document cannot be resumed: a usage error, not an abort.
TEST(SweepCommand, ResumingAFileOfTheWrongShapeIsAUsageError) {
  const std::string json = testing::temp_path("wrong.json");
  std::ofstream(json) << R"({"schema_version": 2, "results": [{"algo": 7}]})";
  auto r = testing::run_cli({"sweep", "--sizes", "4K", "--nodes", "1", "-J", json, "--resume"}, {}, 30);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("field 'algo'"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace omnib
