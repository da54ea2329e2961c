// --min-busbw / --min-speedup on a real small run: missed thresholds exit 5
// after the table and JSON are written; reachable ones exit 0.
#include <gtest/gtest.h>

#include <limits>

#include "tests/support/cli_runner.h"
#include "tools/allreduce/threshold_check.h"

namespace omnib {
namespace {

using testing::read_json;
using testing::run_cli;
using testing::temp_path;

testing::CliResult run_small(std::vector<std::string> extra, const std::string& json) {
  std::vector<std::string> args{"allreduce", "--algo", "omni,ps", "--nodes", "2", "-b", "256K", "-e", "256K",
                                "-n", "3", "-w", "1", "--density", "0.01", "-T", "20", "-J", json};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_cli(args);
}

TEST(Thresholds, UnreachableBusBandwidthExits5AfterWritingResults) {
  const std::string json = temp_path("out.json");
  auto r = run_small({"--min-busbw", "1000000"}, json);
  EXPECT_EQ(r.exit_code, 5) << r.out << r.err;
  EXPECT_NE(r.out.find("missed: 256K float density 0.01 block 256 nodes 2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" omni: busbw"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" ps: busbw"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Avg bus bandwidth"), std::string::npos) << "the table comes first:\n" << r.out;
  EXPECT_NE(r.err.find("--min-busbw"), std::string::npos) << r.err;
  EXPECT_EQ(read_json(json)["results"].size(), 2u);
}

TEST(Thresholds, ReachableThresholdsExit0) {
  auto r = run_small({"--min-busbw", "0.000001", "--min-speedup", "0.001"}, temp_path("out.json"));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("Thresholds           : met"), std::string::npos) << r.out;
}

TEST(Thresholds, UnreachableSpeedupExits5) {
  auto r = run_small({"--min-speedup", "1000000"}, temp_path("out.json"));
  EXPECT_EQ(r.exit_code, 5) << r.out << r.err;
  EXPECT_NE(r.out.find("omni: speedup vs ps"), std::string::npos) << r.out;
}

TEST(Thresholds, MinSpeedupNeedsOmniAndAnotherAlgorithm) {
  auto r = run_cli({"allreduce", "--algo", "omni", "--nodes", "2", "-b", "64K", "-e", "64K", "--min-speedup", "2"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("--algo omni,ps"), std::string::npos) << r.err;
  r = run_cli({"allreduce", "--algo", "omni", "--nodes", "2", "-b", "64K", "-e", "64K", "--min-busbw", "-1"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
}

// NaN fails every comparison: a check of `< 0` took it, and the health
// check was then silently off. The option parser refuses it too; this is
// the check's own guard.
TEST(Thresholds, NanOrInfiniteThresholdsAreUsageErrors) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const std::vector<std::string> algos{"omni", "ps"};
  for (double bad : {nan, inf, -inf}) {
    ThresholdOptions busbw, speedup;
    busbw.min_busbw_GBps = bad;
    speedup.min_speedup = bad;
    EXPECT_EQ(validate_threshold_options(busbw, algos).code(), Code::kUsage) << bad;
    EXPECT_EQ(validate_threshold_options(speedup, algos).code(), Code::kUsage) << bad;
  }
  auto r = run_cli({"allreduce", "--algo", "omni", "--nodes", "2", "-b", "4K", "-e", "4K", "--min-busbw", "nan"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
}

}  // namespace
}  // namespace omnib
