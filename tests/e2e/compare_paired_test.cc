// `omni-bench compare --paired`: run i of the baseline ran beside run i of
// the current side on one host (ci/perf_gate.sh's A B B A ... order), so the
// host's speed, which changes from pair to pair here by up to 3.3x, cancels
// in each pair's ratio; a Wilcoxon signed-rank test judges the ratios.
#include <cmath>

#include <gtest/gtest.h>

#include "tests/support/compare_files.h"

namespace omnib {
namespace {

using nlohmann::json;
using testing::CliResult;
using testing::make_document;
using testing::make_record;
using testing::read_json;
using testing::run_cli;
using testing::temp_path;
using testing::write_result;

// The host's speed at each pair: one load for both runs of a pair.
const std::vector<double> kHost{1.0, 1.8, 0.7, 1.5, 0.6, 2.0, 0.9, 1.3};

// omni at 100 us and ps at 1000 us times the host's speed of each run,
// omni's also times `omni_factor` (and a hair more each pair, so that no two
// pair ratios tie), ps's times `ps_factor`.
json side(double omni_factor, double ps_factor = 1.0, size_t pairs = kHost.size()) {
  std::vector<double> omni, ps;
  for (size_t i = 0; i < pairs; ++i) {
    const double hair = omni_factor == 1.0 ? 1.0 : 1 + 0.002 * static_cast<double>(i);
    omni.push_back(100 * kHost[i % kHost.size()] * omni_factor * hair);
    ps.push_back(1000 * kHost[i % kHost.size()] * ps_factor);
  }
  return make_document({{make_record("omni", omni, 84000), make_record("ps", ps, 4u << 20)}});
}

CliResult compare_paired(const json& base, const json& cur, std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"compare", "--paired", write_result("base.json", base), write_result("cur.json", cur)};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_cli(args, {}, 60);
}

// The comparison of `algo`'s `metric` (and `against`, for speedups) in a --json document.
json find(const json& doc, const std::string& algo, const std::string& metric, const std::string& against = "") {
  for (const auto& c : doc["comparisons"])
    if (c["algo"] == algo && c["metric"] == metric && c.value("against", "") == against) return c;
  return nullptr;
}

TEST(ComparePaired, IdenticalPairsPassAndTimesAreCompared) {
  auto r = compare_paired(side(1.0), side(1.0));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("median time"), std::string::npos) << r.out;  // no --absolute needed
  EXPECT_NE(r.out.find("Wilcoxon signed-rank"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("UNTESTED"), std::string::npos) << r.out;
}

TEST(ComparePaired, ASlowdownFailsWithTheExactP) {
  const std::string verdicts = temp_path("slow.json");
  auto r = compare_paired(side(1.0), side(1.5), {"--json", verdicts});
  EXPECT_EQ(r.exit_code, 5) << r.out << r.err;
  EXPECT_NE(r.out.find("p=0.00391 (signed-rank exact, 8 pair ratios of run medians)"), std::string::npos) << r.out;
  const json doc = read_json(verdicts);
  const json time = find(doc, "omni", "time");
  ASSERT_FALSE(time.is_null()) << doc.dump(2);
  EXPECT_EQ(time["verdict"], "REGRESSION");
  EXPECT_EQ(time["test"]["method"], "signed-rank exact");
  EXPECT_EQ(time["test"]["n_pairs"], 8);
  EXPECT_DOUBLE_EQ(time["test"]["p_value"].get<double>(), 1.0 / 256);
  EXPECT_NEAR(time["ratio"].get<double>(), 1.5 * (1 + 0.002 * 3.5), 1e-3);  // median of the pair ratios
  EXPECT_EQ(find(doc, "omni", "speedup", "ps")["verdict"], "REGRESSION");
  EXPECT_EQ(find(doc, "omni", "speedup", "best dense")["verdict"], "REGRESSION");
  EXPECT_EQ(find(doc, "ps", "time")["verdict"], "PASS");
  EXPECT_TRUE(doc["rules"]["paired"].get<bool>());
}

// Everything 30% slower while the host's speed swings: the two sides'
// times overlap, so unpaired they show no significant shift (NOISE); paired,
// every ratio is 1.3.
TEST(ComparePaired, TheHostsSwingsCancelWithinPairs) {
  const json base = side(1.0), slower = side(1.3, 1.3);
  auto unpaired = run_cli({"compare", write_result("b.json", base), write_result("c.json", slower), "--absolute",
                           "--metric", "time"},
                          {}, 60);
  EXPECT_EQ(unpaired.exit_code, 0) << unpaired.out << unpaired.err;
  EXPECT_NE(unpaired.out.find("NOISE"), std::string::npos) << unpaired.out;
  auto paired = compare_paired(base, slower, {"--metric", "time"});
  EXPECT_EQ(paired.exit_code, 5) << paired.out << paired.err;
  EXPECT_NE(paired.out.find("ps           median time"), std::string::npos) << paired.out;
  EXPECT_EQ(paired.out.find("NOISE"), std::string::npos) << paired.out;
}

TEST(ComparePaired, TooFewPairsCannotJudgeTiming) {
  auto r = compare_paired(side(1.0, 1.0, 4), side(3.0, 1.0, 4));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("REGRESSION"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cannot judge timing: 4 pairs reach p = 0.0625 at best (alpha 0.05); needs 5 pairs"),
            std::string::npos)
      << r.out;
  r = compare_paired(side(1.0, 1.0, 5), side(3.0, 1.0, 5));
  EXPECT_EQ(r.exit_code, 5) << r.out << r.err;
  EXPECT_NE(r.out.find("p=0.0312 (signed-rank exact, 5 pair ratios"), std::string::npos) << r.out;
}

// The gate writes one file per run; the comma lists pair in order.
TEST(ComparePaired, OneFilePerRunPairsInListOrder) {
  std::string base_files, same_files, slow_files;
  for (size_t i = 0; i < 6; ++i) {
    auto one = [&](double factor) {
      const std::vector<double> omni{100 * kHost[i] * factor * (1 + 0.002 * static_cast<double>(i))};
      const std::vector<double> ps{1000 * kHost[i]};
      return write_result("run.json", make_document({{make_record("omni", omni, 84000), make_record("ps", ps, 4u << 20)}}));
    };
    base_files += (i ? "," : "") + one(1.0);
    same_files += (i ? "," : "") + one(1.0);
    slow_files += (i ? "," : "") + one(1.5);
  }
  auto r = run_cli({"compare", "--paired", base_files, same_files}, {}, 60);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  r = run_cli({"compare", "--paired", base_files, slow_files}, {}, 60);
  EXPECT_EQ(r.exit_code, 5) << r.out << r.err;
  EXPECT_NE(r.out.find("6 pair ratios"), std::string::npos) << r.out;
}

TEST(ComparePaired, SidesOfDifferentRunCountsExit2) {
  auto r = compare_paired(side(1.0, 1.0, 6), side(1.0, 1.0, 5));
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("has 6 baseline runs and 5 current runs"), std::string::npos) << r.err;
}

// The power of a paired comparison: with pair ratios within a hair of each
// other, any slowdown beyond the tolerance is flagged; with ratios scattered
// by up to 30%, only a larger one: the pairs moved until the signed-rank test
// reaches p < 0.05 (W+ >= 31 of 36 for 8 pairs), which puts their median
// 20.66% above 1 (computed apart, by bisection over the exact distribution).
TEST(ComparePaired, DetectableFollowsThePairsSpread) {
  const std::string tight = temp_path("tight.json");
  ASSERT_EQ(compare_paired(side(1.0), side(1.0), {"--json", tight}).exit_code, 0);
  EXPECT_NEAR(find(read_json(tight), "omni", "time")["detectable"].get<double>(), 0.10, 1e-9);

  const std::vector<double> scatter{1.3, 0.8, 1.15, 0.75, 1.2, 0.85, 1.1, 0.9};
  std::vector<double> omni, ps;
  for (size_t i = 0; i < kHost.size(); ++i) {
    omni.push_back(100 * kHost[i] * scatter[i]);
    ps.push_back(1000 * kHost[i]);
  }
  const json scattered = make_document({{make_record("omni", omni, 84000), make_record("ps", ps, 4u << 20)}});
  const std::string wide = temp_path("wide.json");
  ASSERT_EQ(compare_paired(side(1.0), scattered, {"--json", wide}).exit_code, 0);
  EXPECT_NEAR(find(read_json(wide), "omni", "time")["detectable"].get<double>(), 0.20659949983682965, 1e-6);
}

}  // namespace
}  // namespace omnib
