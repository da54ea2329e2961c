// `omni-bench compare` with too few runs for any test: timing is not judged
// (UNTESTED), never called a regression, and the report says how many runs a
// test needs. Once, two back-to-back runs of one build (--repeat 1) compared
// as "speedup vs best dense 5.607x 4.398x -21.55% REGRESSION", exit 5.
#include <gtest/gtest.h>

#include "tests/support/compare_files.h"

namespace omnib {
namespace {

using nlohmann::json;
using testing::compare;
using testing::make_document;
using testing::make_record;
using testing::read_json;
using testing::run_cli;
using testing::temp_path;

// One run of omni, ring and ps with the given times, as `allreduce --repeat 1` writes.
json one_run(double omni_us, double ring_us, double ps_us) {
  return make_document({{make_record("omni", std::vector<double>{omni_us}, 84000),
                         make_record("ring", std::vector<double>{ring_us}, 3u << 20),
                         make_record("ps", std::vector<double>{ps_us}, 4u << 20)}});
}

TEST(CompareUntested, TwoSingleRunsAreNeverARegression) {
  // The speedups of the report above, then a tripled omni time: not judged either way.
  const double base_omni_us = 1000 / 5.607;  // ring at 1000 us is the faster dense
  for (double omni_us : {1000 / 4.398, 3 * base_omni_us}) {
    const std::string verdicts = temp_path("single.json");
    auto r = compare(one_run(base_omni_us, 1000, 1200), one_run(omni_us, 1000, 1200), {"--json", verdicts});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_EQ(r.out.find("REGRESSION"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("UNTESTED"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("cannot judge timing: 1 baseline and 1 current run reach p = 0.5 at best (alpha 0.05); "
                         "needs 4 runs a side"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("(timing not judged: too few runs)"), std::string::npos) << r.out;
    const json doc = read_json(verdicts);
    EXPECT_EQ(doc["regressions"], 0);
    EXPECT_GE(doc["untested"].get<int>(), 4);  // speedups over ring, ps, the best dense; cpu
    EXPECT_TRUE(doc["summary"]["speedup"]["detectable"].is_null());
    EXPECT_EQ(doc["summary"]["bytes"]["verdicts"]["PASS"], 3);  // exact counts are judged all the same
  }
}

TEST(CompareUntested, SaysHowManyCurrentRunsABaselineOfFiveNeeds) {
  json base = make_document({{make_record("omni", 100, 84000), make_record("ps", 1000, 4u << 20)}});
  auto r = compare(base, make_document({{make_record("omni", std::vector<double>{300}, 84000),
                                         make_record("ps", std::vector<double>{1000}, 4u << 20)}}));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("needs 4 runs a side (or 2 current runs beside the baseline's 5)"), std::string::npos) << r.out;
}

// As a user would: the real binary, two runs of one build, then compare.
TEST(CompareUntested, TwoRunsOfOneBuildWithRepeatOne) {
  std::vector<std::string> files;
  for (const char* name : {"a.json", "b.json"}) {
    files.push_back(temp_path(name));
    auto run = run_cli({"allreduce", "--algo", "omni,ring,ps", "--density", "0.01", "-b", "1M", "-e", "1M", "-n", "5",
                        "-w", "2", "-J", files.back()},
                       {}, 120);
    ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  }
  auto r = run_cli({"compare", files[0], files[1]}, {}, 60);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("REGRESSION"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cannot judge timing"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# timing NOT judged"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace omnib
