// results/check_directions.py, the check that a second run of the example
// study reproduces every speedup's direction: a direction is claimed only
// where every run of a point agrees, and a contradicted one fails the check.
#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/cli_runner.h"

namespace omnib {
namespace {

using nlohmann::json;
using testing::CliResult;
using testing::run_binary;
using testing::temp_path;

// One point of a study: omni's and ring's per-run median times.
json study(const std::vector<double>& omni_runs, const std::vector<double>& ring_runs) {
  auto record = [](const std::string& algo, const std::vector<double>& runs) {
    json r{{"algo", algo}, {"skipped", false}, {"config", {{"nodes", 4}, {"density", 0.01}, {"block_size", 256}}}};
    std::vector<double> sorted = runs;
    std::sort(sorted.begin(), sorted.end());
    r["time_us"] = {{"median", sorted[sorted.size() / 2]}};
    for (double t : runs) r["runs"].push_back({{"median_us", t}});
    return r;
  };
  return json{{"results", {record("omni", omni_runs), record("ring", ring_runs)}}};
}

CliResult check(const json& first, const json& second) {
  const std::string a = temp_path("first.json"), b = temp_path("second.json");
  std::ofstream(a) << first.dump();
  std::ofstream(b) << second.dump();
  return run_binary("/usr/bin/python3", {std::string(OMNIB_SOURCE_DIR) + "/results/check_directions.py", a, b});
}

TEST(CheckDirections, TheSameDirectionInBothStudiesPasses) {
  const CliResult r = check(study({10, 11, 10}, {20, 21, 19}), study({12, 10, 11}, {25, 22, 20}));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("faster"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 with the same direction in both"), std::string::npos) << r.out;
}

TEST(CheckDirections, AReversedDirectionFails) {
  const CliResult r = check(study({10, 11, 10}, {20, 21, 19}), study({20, 21, 19}, {10, 11, 10}));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("FLIPPED"), std::string::npos) << r.out;
}

TEST(CheckDirections, RunsThatDisagreeClaimNoDirection) {
  // The first study's runs straddle 1 (0.7x..1.4x): a tie, so a second study
  // whose runs all say slower contradicts nothing it claimed...
  const CliResult tie = check(study({10, 10, 10}, {14, 7, 12}), study({10, 10, 10}, {9.8, 9.9, 9.7}));
  EXPECT_EQ(tie.exit_code, 0) << tie.out << tie.err;
  EXPECT_NE(tie.out.find("tie"), std::string::npos) << tie.out;
  // Two studies whose runs both straddle 1 agree on nothing but the tie.
  const CliResult both = check(study({10, 10, 10}, {14, 7, 12}), study({10, 10, 10}, {13, 8, 12}));
  EXPECT_EQ(both.exit_code, 0) << both.out << both.err;
  EXPECT_NE(both.out.find("0 with the same direction in both, 1 a tie"), std::string::npos) << both.out;
  // ...but a claimed direction whose rerun's median lies clearly on the
  // other side fails, even when the rerun's own runs disagree.
  const CliResult contradicted = check(study({10, 10, 10}, {20, 21, 19}), study({10, 10, 10}, {14, 7, 8}));
  EXPECT_EQ(contradicted.exit_code, 1) << contradicted.out << contradicted.err;
}

TEST(CheckDirections, UnreadableInputIsExitTwo) {
  const CliResult r = run_binary("/usr/bin/python3", {std::string(OMNIB_SOURCE_DIR) + "/results/check_directions.py",
                                                      temp_path("missing.json"), temp_path("missing-too.json")});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
}

}  // namespace
}  // namespace omnib
