// ci/perf_gate.sh, run as CI runs it: the A/B gate fails a candidate that is
// 1.5x slower than its base even where the candidate still beats the
// committed baseline file (the engine became faster since the file was made,
// and the file gate reads it as an improvement), and without its base
// revision the gate says so and falls back to the file. A few minutes of benchmark runs: label `gate`
// (ctest -L gate runs them alone, -LE gate leaves them out).
#include <gtest/gtest.h>

#include "tests/support/cli_runner.h"

namespace omnib {
namespace {

using nlohmann::json;
using testing::omni_bench_binary;
using testing::read_json;
using testing::run_binary;
using testing::run_cli;
using testing::sabotage_binary;
using testing::temp_path;

const std::string kScript = std::string(OMNIB_SOURCE_DIR) + "/ci/perf_gate.sh";
const std::string kBaselineFile = std::string(OMNIB_SOURCE_DIR) + "/results/ci-baseline.json";
constexpr int kPairs = 8;

// At density 0.01 the engine became faster after the file was made: a
// candidate 1.5x slower than today's base reads there as no worse than the
// file (its speedup within the file's 25% tolerance: 0.99x of the file's in
// one CI run), while the A/B gate fails it. (At density 0.1
// the gain since was smaller, and the file may or may not catch it: not
// asserted.)
TEST(PerfGate, FailsASlowdownThatTheBaselineFileCannotSee) {
  const std::string work = temp_path("ab");
  auto gate = run_binary("/bin/bash", {kScript},
                         {"OMNI_BENCH=" + sabotage_binary(), "OMNIB_SABOTAGE_OMNI=sleep", "OMNIB_SABOTAGE_SLOWDOWN=1.5",
                          "PERF_GATE_BASE_BENCH=" + omni_bench_binary(), "PERF_GATE_WORKDIR=" + work,
                          "PERF_GATE_PAIRS=" + std::to_string(kPairs)},
                         900);
  ASSERT_EQ(gate.exit_code, 5) << gate.out << gate.err;
  EXPECT_NE(gate.out.find(" density 0.01 block 256 nodes 4 overlap random blocks cpu | omni median time:"),
            std::string::npos)
      << gate.out;
  EXPECT_NE(gate.err.find("perf_gate: power: "), std::string::npos) << gate.err;

  // The same candidate runs against the committed file, by the file gate's rules.
  std::string runs;
  for (int i = 0; i < kPairs; ++i) runs += (i ? "," : "") + work + "/candidate-" + std::to_string(i) + ".json";
  const std::string verdicts = temp_path("file-verdicts.json");
  auto file = run_cli({"compare", kBaselineFile, runs, "--metric", "bytes,frames,speedup,cpu,correct", "--tolerance",
                       "0.25", "--cpu-tolerance", "0.25", "--cpu-reference", "ring", "--json", verdicts},
                      {}, 60);
  ASSERT_TRUE(file.exit_code == 0 || file.exit_code == 5) << file.out << file.err;
  int headlines = 0;
  const json doc = read_json(verdicts);
  for (const auto& c : doc["comparisons"]) {
    if (c.value("algo", "") != "omni" || c.value("metric", "") != "speedup" || c.value("against", "") != "best dense" ||
        c["configuration"]["density"].get<double>() != 0.01)
      continue;
    ++headlines;
    // A host starved by the rest of a parallel suite sinks every speedup
    // below the file's (seen: a rank waiting for a CPU 59% of its call, 0.72x
    // of the file); compare says so in the note, and then the file measured
    // the host, not the slowdown, so there is nothing to assert.
    if (c.value("note", "").find("host-bound now") != std::string::npos) continue;
    EXPECT_NE(c["verdict"], "REGRESSION") << c.dump();
  }
  EXPECT_EQ(headlines, 1) << file.out;
}

TEST(PerfGate, WithoutItsBaseRevisionFallsBackToTheBaselineFileAndSaysSo) {
  auto gate = run_binary("/bin/bash", {kScript, "--base", "0123456789abcdef0123456789abcdef01234567"},
                         {"OMNI_BENCH=" + omni_bench_binary()}, 600);
  EXPECT_TRUE(gate.exit_code == 0 || gate.exit_code == 5) << gate.out << gate.err;
  EXPECT_NE(gate.err.find("is not in this clone"), std::string::npos) << gate.err;
  EXPECT_NE(gate.err.find("FALLING BACK to the committed baseline file"), std::string::npos) << gate.err;
  EXPECT_NE(gate.err.find("judged against results/ci-baseline.json, not against the base revision"),
            std::string::npos)
      << gate.err;
  EXPECT_NE(gate.out.find("# result: "), std::string::npos) << gate.out;
}

TEST(PerfGate, ABaseBuildThatDoesNotRunIsAnError) {
  auto gate = run_binary("/bin/bash", {kScript}, {"PERF_GATE_BASE_BENCH=/nonexistent/omni-bench"}, 60);
  EXPECT_EQ(gate.exit_code, 2) << gate.out << gate.err;
  EXPECT_NE(gate.err.find("PERF_GATE_BASE_BENCH=/nonexistent/omni-bench does not run"), std::string::npos) << gate.err;
}

TEST(PerfGate, TheSlowdownSabotageRefusesABadFactor) {
  for (const char* bad : {"1", "0.5", "fast", "101"}) {
    auto r = run_binary(sabotage_binary(), {"--version"},
                        {"OMNIB_SABOTAGE_OMNI=sleep", std::string("OMNIB_SABOTAGE_SLOWDOWN=") + bad}, 30);
    EXPECT_EQ(r.exit_code, 2) << bad << r.out << r.err;
    EXPECT_NE(r.err.find("give a factor above 1 and at most 100"), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace omnib
