// `omni-bench compare`: the CI performance gate, run as the real binary on
// result files crafted here.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>

#include <gtest/gtest.h>

#include "engine/collective/collective.h"
#include "tests/support/cli_runner.h"
#include "tests/support/compare_files.h"
#include "tools/compare/metric_samples.h"
#include "tools/record/result_record.h"

namespace omnib {
namespace {

using nlohmann::json;
using testing::compare;
using testing::make_document;
using testing::make_record;
using testing::read_json;
using testing::run_cli;
using testing::standard_group;
using testing::temp_path;
using testing::write_result;

TEST(Compare, IdenticalFilesPass) {
  const json doc = make_document({standard_group()});
  auto r = compare(doc, doc);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const char* metric : {"speedup vs ps", "wire bytes/rank", "wire frames/rank", "cpu ns/wire byte", "correct"})
    EXPECT_NE(r.out.find(metric), std::string::npos) << metric << "\n" << r.out;
  EXPECT_NE(r.out.find("# result: PASS"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("REGRESSION"), std::string::npos) << r.out;
}

TEST(Compare, HalvedSpeedupFails) {
  // omni twice as slow: its speedup over ps falls from 10x to 5x.
  auto r = compare(make_document({standard_group(100)}), make_document({standard_group(200)}));
  EXPECT_EQ(r.exit_code, 5) << r.out << r.err;
  EXPECT_NE(r.out.find("REGRESSION"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("-50.00%"), std::string::npos) << r.out;
}

// A regression measured on a starved host says so; an unstarved pair of
// runs carries no such note.
TEST(Compare, ARegressionOnAHostBoundRunSaysSo) {
  auto starved = standard_group(200);
  for (auto& r : starved) r.cpu = CpuUsage{100, 10, 50, 1.0, {0.02, 0.34}, std::nullopt};
  auto r = compare(make_document({standard_group(100)}), make_document({starved}));
  EXPECT_EQ(r.exit_code, 5) << r.out << r.err;
  EXPECT_NE(r.out.find("host-bound now: a rank waited for a CPU 34% of its call (baseline not measured)"),
            std::string::npos)
      << r.out;
  auto idle = standard_group(200);
  for (auto& rec : idle) rec.cpu = CpuUsage{100, 10, 50, 1.0, {0.02, 0.03}, std::nullopt};
  auto plain = compare(make_document({standard_group(100)}), make_document({idle}));
  EXPECT_EQ(plain.out.find("host-bound"), std::string::npos) << plain.out;
}

TEST(Compare, WireBytesAreExactInBothDirections) {
  auto more = compare(make_document({standard_group(100, 84000)}), make_document({standard_group(100, 84048)}));
  EXPECT_EQ(more.exit_code, 5) << more.out << more.err;
  EXPECT_NE(more.out.find("REGRESSION"), std::string::npos) << more.out;

  // Fewer bytes fail as a change unless the user accepts improvements.
  const json base = make_document({standard_group(100, 84000)});
  const json fewer = make_document({standard_group(100, 42000)});
  auto changed = compare(base, fewer, {"--metric", "bytes"});
  EXPECT_EQ(changed.exit_code, 5) << changed.out << changed.err;
  EXPECT_NE(changed.out.find("CHANGED"), std::string::npos) << changed.out;
  auto accepted = compare(base, fewer, {"--accept-improvements", "--metric", "bytes,frames"});
  EXPECT_EQ(accepted.exit_code, 0) << accepted.out << accepted.err;
  EXPECT_NE(accepted.out.find("IMPROVED"), std::string::npos) << accepted.out;
}

TEST(Compare, BytesFallingToZeroAlwaysFail) {
  auto r = compare(make_document({standard_group(100, 84000)}), make_document({standard_group(100, 0)}),
                   {"--accept-improvements"});
  EXPECT_EQ(r.exit_code, 5) << r.out << r.err;
  EXPECT_NE(r.out.find("fell to zero while the algorithm ran"), std::string::npos) << r.out;
}

TEST(Compare, MoreFramesFail) {
  auto cur = standard_group();
  *cur[0].wire_frames_per_rank_max += 1;
  auto r = compare(make_document({standard_group()}), make_document({cur}), {"--metric", "frames"});
  EXPECT_EQ(r.exit_code, 5) << r.out << r.err;
  EXPECT_NE(r.out.find("wire frames/rank"), std::string::npos) << r.out;
}

TEST(Compare, NoiseInsideTolerancePasses) {
  auto r = compare(make_document({standard_group(100)}), make_document({standard_group(105.2)}),
                   {"--metric", "speedup,bytes,correct"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("REGRESSION"), std::string::npos) << r.out;
}

TEST(Compare, ToleranceFlagsAreHonoured) {
  auto r = compare(make_document({standard_group(100)}), make_document({standard_group(105.2)}),
                   {"--tolerance", "0.02", "--metric", "speedup"});
  EXPECT_EQ(r.exit_code, 5) << r.out << r.err;
  r = compare(make_document({standard_group(100, 84000)}), make_document({standard_group(100, 84420)}),
              {"--bytes-tolerance", "0.01", "--metric", "bytes"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST(Compare, CpuPerByteRiseBeyondItsToleranceFails) {
  auto cur = standard_group();
  for (auto& run : cur[0].runs) *run.cpu_ns_per_wire_byte *= 2;
  auto r = compare(make_document({standard_group()}), make_document({cur}), {"--metric", "cpu"});
  EXPECT_EQ(r.exit_code, 5) << r.out << r.err;
  EXPECT_NE(r.out.find("cpu ns/wire byte"), std::string::npos) << r.out;
  r = compare(make_document({standard_group()}), make_document({cur}), {"--metric", "cpu", "--cpu-tolerance", "1.5"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

// With --cpu-reference, CPU per byte is judged over the reference's in the
// same run: a host slower at everything passes, a subject that alone burns
// twice the CPU fails, and the reference itself is not judged.
TEST(Compare, CpuPerByteOverAReferenceCancelsASlowerMachine) {
  auto slower = standard_group();
  for (auto& record : slower)
    for (auto& run : record.runs) *run.cpu_ns_per_wire_byte *= 1.6;
  const std::vector<std::string> relative{"--metric", "cpu", "--cpu-reference", "ps"};
  auto r = compare(make_document({standard_group()}), make_document({slower}), {"--metric", "cpu"});
  EXPECT_EQ(r.exit_code, 5) << r.out << r.err;  // absolute: every algorithm regressed
  r = compare(make_document({standard_group()}), make_document({slower}), relative);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("cpu/byte over ps's"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("ps           cpu"), std::string::npos) << r.out;
  auto burning = standard_group();
  for (auto& run : burning[0].runs) *run.cpu_ns_per_wire_byte *= 2;
  r = compare(make_document({standard_group()}), make_document({burning}), relative);
  EXPECT_EQ(r.exit_code, 5) << r.out << r.err;
  r = compare(make_document({standard_group()}), make_document({standard_group()}),
              {"--metric", "cpu", "--cpu-reference", "ring"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("ring did not run beside it"), std::string::npos) << r.out;
}

TEST(Compare, LostCorrectnessFails) {
  auto current = standard_group();
  current[0].correct = false;
  current[0].wrong_elements = 17;
  current[0].wrong_calls = 1;
  auto r = compare(make_document({standard_group()}), make_document({current}));
  EXPECT_EQ(r.exit_code, 5) << r.out << r.err;
  EXPECT_NE(r.out.find("correct"), std::string::npos);
}

TEST(Compare, UncheckedIsNeverCorrect) {
  auto current = standard_group();
  for (auto& rec : current) {
    rec.checked = false;
    rec.correct.reset();
  }
  const json doc = make_document({current});
  EXPECT_TRUE(doc["results"][0]["correct"].is_null());
  auto r = compare(make_document({standard_group()}), doc);
  EXPECT_EQ(r.exit_code, 5) << r.out << r.err;
  EXPECT_NE(r.out.find("not checked now"), std::string::npos) << r.out;
}

TEST(Compare, MetricFlagRestrictsTheRules) {
  auto r = compare(make_document({standard_group(100)}), make_document({standard_group(200)}), {"--metric", "bytes"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("speedup vs"), std::string::npos) << r.out;
  r = compare(make_document({standard_group()}), make_document({standard_group()}), {"--metric", "latency"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("bytes, frames, speedup, cpu, time, correct"), std::string::npos) << r.err;
}

TEST(Compare, AbsoluteTimesOnlyWhenAsked) {
  // Both algorithms 50% slower: the speedup holds, only absolute time shows it.
  auto slow = standard_group(150);
  slow[1] = make_record("ps", 1500, 4u << 20);
  const json base = make_document({standard_group(100)}), cur = make_document({slow});
  auto r = compare(base, cur, {"--metric", "speedup,bytes,correct"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  r = compare(base, cur, {"--absolute", "--metric", "time"});
  EXPECT_EQ(r.exit_code, 5) << r.out << r.err;
  EXPECT_NE(r.out.find("median time"), std::string::npos) << r.out;
  r = compare(base, cur, {"--metric", "time"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("--absolute"), std::string::npos) << r.err;
}

TEST(Compare, MinSizeLeavesSmallConfigurationsOut) {
  std::vector<ResultRecord> small_base{make_record("omni", 100, 84000, 64 << 10), make_record("ps", 1000, 1 << 20, 64 << 10)};
  std::vector<ResultRecord> small_cur{make_record("omni", 300, 84000, 64 << 10), make_record("ps", 1000, 1 << 20, 64 << 10)};
  const json base = make_document({small_base, standard_group()});
  const json cur = make_document({small_cur, standard_group()});
  EXPECT_EQ(compare(base, cur).exit_code, 5);
  auto r = compare(base, cur, {"--min-size", "1M"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("smaller than 1M"), std::string::npos) << r.out;
}

TEST(Compare, ACurrentRunMissingConfigurationsFails) {
  std::vector<ResultRecord> small{make_record("omni", 100, 84000, 64 << 10), make_record("ps", 1000, 1 << 20, 64 << 10)};
  auto r = compare(make_document({small, standard_group()}), make_document({standard_group()}));
  EXPECT_EQ(r.exit_code, 5) << r.out << r.err;
  EXPECT_NE(r.out.find("MISSING from the current run"), std::string::npos) << r.out;
}

TEST(Compare, AnAlgorithmThatNoLongerRunsFails) {
  auto current = standard_group();
  current[1].skipped = true;
  current[1].skip_reason = "no GPU";
  current.push_back(make_record("ring", 900, 3u << 20));
  auto r = compare(make_document({standard_group()}), make_document({current}));
  EXPECT_EQ(r.exit_code, 5) << r.out << r.err;
  EXPECT_NE(r.out.find("ps: ran in the baseline, skipped: no GPU now"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("note: ring: new (not run in the baseline)"), std::string::npos) << r.out;
}

TEST(Compare, SubjectFlagChoosesWhoseSpeedupsAreChecked) {
  auto r = compare(make_document({standard_group()}), make_document({standard_group()}), {"--subject", "ps"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("speedup vs omni"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("speedup vs ps"), std::string::npos) << r.out;
}

TEST(Compare, UnknownSchemaVersionExits2) {
  json cur = make_document({standard_group()});
  cur["schema_version"] = kSchemaVersion + 1;
  auto r = compare(make_document({standard_group()}), cur);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("schema_version"), std::string::npos) << r.err;
}

// A schema 1 file (identity at the top level of each record) still loads:
// the newer fields take their defaults, and the report says so.
TEST(Compare, SchemaOneFilesLoadWithDefaults) {
  json old = make_document({standard_group()});
  old["schema_version"] = 1;
  for (auto& rec : old["results"]) {
    for (const auto& [k, v] : rec["config"].items())
      if (k != "net" && k != "link_rate_bps" && k != "link_delay_ns" && k != "transport" && k != "shard_layout")
        rec[k] = v;
    rec.erase("config");
  }
  // Schema 1 engines dealt blocks to shards in contiguous ranges.
  json cur = make_document({standard_group()});
  for (auto& rec : cur["results"]) rec["config"]["shard_layout"] = "contiguous";
  auto r = compare(old, cur);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("took their defaults: net, link_rate_bps"), std::string::npos) << r.out;
}

TEST(Compare, NoCommonConfigurationExits2AndSaysWhatDiffers) {
  std::vector<ResultRecord> other{make_record("omni", 100, 84000, 8u << 20, 8), make_record("ps", 1000, 8u << 20, 8u << 20, 8)};
  auto r = compare(make_document({standard_group()}), make_document({other}));
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("no configuration in common"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("size_bytes: baseline 4M; current 8M"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nodes: baseline 4; current 8"), std::string::npos) << r.err;
}

// The same run at two emulated link rates is two configurations: compared
// each with itself, never pooled as repetitions of one.
TEST(Compare, LinkRatesAreTwoConfigurations) {
  auto at = [](uint64_t bps, double omni_us) {
    auto g = standard_group(omni_us);
    for (auto& rec : g) {
      rec.config.net = "emulate";
      rec.config.link_rate_bps = bps;
    }
    return g;
  };
  const json doc = make_document({at(50'000'000, 100), at(100'000'000, 60)});
  const std::string verdicts = temp_path("rates.json");
  auto r = compare(doc, doc, {"--json", verdicts});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("emulate 50mbit"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("emulate 100mbit"), std::string::npos) << r.out;
  std::set<uint64_t> rates;
  const json written = read_json(verdicts);
  for (const auto& c : written["comparisons"]) rates.insert(c["configuration"]["link_rate_bps"].get<uint64_t>());
  EXPECT_EQ(rates, (std::set<uint64_t>{50'000'000, 100'000'000}));
}

TEST(Compare, UnreadableOrInvalidFilesExit2) {
  const std::string good = write_result("good.json", make_document({standard_group()}));
  auto r = run_cli({"compare", temp_path("missing.json"), good});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("cannot read"), std::string::npos) << r.err;

  const std::string broken = temp_path("broken.json");
  std::ofstream(broken) << "{\"schema_version\": 1, \"results\": [";
  r = run_cli({"compare", good, broken});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not valid JSON"), std::string::npos) << r.err;

  const std::string other = write_result("other.json", json{{"hello", "world"}});
  r = run_cli({"compare", good, other});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not an omni-bench result file"), std::string::npos) << r.err;
}

TEST(Compare, WrongTypesExit2NamingTheField) {
  json doc = make_document({standard_group()});
  doc["command_line"] = 42;
  auto r = compare(make_document({standard_group()}), doc);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("command_line"), std::string::npos) << r.err;

  doc = make_document({standard_group()});
  doc["environment"]["git_revision"] = json::array();
  r = compare(make_document({standard_group()}), doc);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("git_revision"), std::string::npos) << r.err;

  doc = make_document({standard_group()});
  doc["results"][0]["config"]["nodes"] = "four";
  r = compare(make_document({standard_group()}), doc);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("field 'nodes'"), std::string::npos) << r.err;

  doc = make_document({standard_group()});
  doc["schema_version"] = 18446744073709551615ull;
  r = compare(make_document({standard_group()}), doc);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
}

TEST(Compare, ZeroOrNegativeTimesExit2) {
  for (double bad : {0.0, -5.0}) {
    json doc = make_document({standard_group()});
    doc["results"][0]["time_us"]["median"] = bad;
    auto r = compare(make_document({standard_group()}), doc);
    EXPECT_EQ(r.exit_code, 2) << bad << r.out << r.err;
    EXPECT_NE(r.err.find("not positive"), std::string::npos) << r.err;
  }
}

// Per-run medians: ps steady at 1000 us, omni's runs spread widely.
const std::vector<double> kBaseOmni{70, 150, 90, 180, 110, 130, 60, 170, 100, 140, 80, 120};

std::vector<ResultRecord> repeated_group(const std::vector<double>& omni) {
  return {make_record("omni", omni, 84000), make_record("ps", std::vector<double>(omni.size(), 1000), 4u << 20)};
}

TEST(Compare, OverlappingNoisyRunsWithSmallShiftAreNoise) {
  // The median speedup drops 11.5% (beyond the 10% tolerance), but the runs
  // overlap so much that the shift is not significant.
  std::vector<double> shifted;
  for (double t : kBaseOmni) shifted.push_back(t + 15);
  auto r = compare(make_document({repeated_group(kBaseOmni)}), make_document({repeated_group(shifted)}),
                   {"--metric", "speedup"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("NOISE"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("run speedups"), std::string::npos) << r.out;
}

TEST(Compare, ClearShiftInRunsFails) {
  std::vector<double> doubled;
  for (double t : kBaseOmni) doubled.push_back(t * 2);
  auto r = compare(make_document({repeated_group(kBaseOmni)}), make_document({repeated_group(doubled)}),
                   {"--metric", "speedup"});
  EXPECT_EQ(r.exit_code, 5) << r.out << r.err;
  EXPECT_NE(r.out.find("REGRESSION"), std::string::npos) << r.out;
}

// Three runs a side reach p = 0.05 at best, never below the default alpha:
// no test can judge them, so not even a tripled time is called a regression
// (a tolerance alone called two runs of one build a 21% regression). compare
// says it cannot judge timing and how many runs it needs; that many do fail.
TEST(Compare, ThreeRunsASideCannotJudgeEvenATripledTime) {
  const std::vector<double> base{100, 110, 120};
  const std::vector<double> tripled{300, 330, 360};
  auto r = compare(make_document({repeated_group(base)}), make_document({repeated_group(tripled)}),
                   {"--metric", "speedup"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("REGRESSION"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("UNTESTED"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cannot judge timing: 3 baseline and 3 current runs reach p = 0.05 at best (alpha 0.05); "
                       "needs 4 runs a side"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("# timing NOT judged in 2 of 2 comparisons"), std::string::npos) << r.out;

  auto four = compare(make_document({repeated_group({100, 110, 120, 105})}),
                      make_document({repeated_group({300, 330, 360, 315})}), {"--metric", "speedup"});
  EXPECT_EQ(four.exit_code, 5) << four.out << four.err;
  EXPECT_NE(four.out.find("REGRESSION"), std::string::npos) << four.out;
}

// Several files on one side are more runs of each configuration.
TEST(Compare, SeveralFilesPerSideAreRuns) {
  std::string base_files, cur_files;
  for (int i = 0; i < 6; ++i) {
    const std::vector<double> base_run{100.0 + i}, cur_run{130.0 + i};
    base_files += (i ? "," : "") + write_result("b.json", make_document({{make_record("omni", base_run, 84000)}}));
    cur_files += (i ? "," : "") + write_result("c.json", make_document({{make_record("omni", cur_run, 84000)}}));
  }
  auto r = run_cli({"compare", base_files, cur_files, "--absolute", "--metric", "time"}, {}, 60);
  EXPECT_EQ(r.exit_code, 5) << r.out << r.err;
  EXPECT_NE(r.out.find("6/6 run medians"), std::string::npos) << r.out;
}

// What a pass means: the report states the smallest regression each metric
// could have flagged given the runs and their spread.
TEST(Compare, ReportsTheSmallestDetectableRegression) {
  const std::string verdicts = temp_path("power.json");
  auto r = compare(make_document({repeated_group(kBaseOmni)}), make_document({repeated_group(kBaseOmni)}),
                   {"--json", verdicts, "--metric", "speedup"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("detectable"), std::string::npos) << r.out;
  const double detectable = read_json(verdicts)["summary"]["speedup"]["detectable"].get<double>();
  // Runs spread over 60..180 us: a 10% shift is not enough to be significant.
  EXPECT_GT(detectable, 0.10);
  EXPECT_LT(detectable, 0.9);
  // One run a side: no test is possible, so no regression could be flagged.
  const std::string one = temp_path("one.json");
  r = compare(make_document({repeated_group({100})}), make_document({repeated_group({100})}),
              {"--json", one, "--metric", "speedup"});
  EXPECT_TRUE(read_json(one)["summary"]["speedup"]["detectable"].is_null()) << r.out;
  EXPECT_NE(r.out.find("none at all"), std::string::npos) << r.out;
}

TEST(Compare, JsonOutputHoldsTheVerdicts) {
  const std::string out = temp_path("verdicts.json");
  auto r = compare(make_document({standard_group(100, 84000)}), make_document({standard_group(200, 84000)}),
                   {"--json", out});
  ASSERT_EQ(r.exit_code, 5) << r.out << r.err;
  const json doc = read_json(out);
  EXPECT_EQ(doc["verdict"], "FAIL");
  EXPECT_GE(doc["regressions"].get<int>(), 1);
  EXPECT_EQ(doc["rules"]["subject"], "omni");
  bool saw_speedup = false, saw_bytes = false;
  for (const auto& c : doc["comparisons"]) {
    if (c["metric"] == "speedup" && c["against"] == "best dense") {
      EXPECT_EQ(c["verdict"], "REGRESSION");  // ps is the only dense algorithm: the same ratio
      EXPECT_NEAR(c["change"].get<double>(), -0.5, 1e-9);
    } else if (c["metric"] == "speedup") {
      saw_speedup = true;
      EXPECT_EQ(c["verdict"], "REGRESSION");
      EXPECT_EQ(c["against"], "ps");
      EXPECT_NEAR(c["change"].get<double>(), -0.5, 1e-9);
      EXPECT_EQ(c["configuration"]["size_bytes"], 4u << 20);
    }
    if (c["metric"] == "bytes" && c["algo"] == "omni") {
      saw_bytes = true;
      EXPECT_EQ(c["verdict"], "PASS");
    }
  }
  EXPECT_TRUE(saw_speedup && saw_bytes) << doc.dump(2);
  EXPECT_NEAR(doc["summary"]["speedup"]["geomean_ratio"].get<double>(), 0.5, 1e-9);

  // An existing --json file is kept unless --force.
  r = compare(make_document({standard_group()}), make_document({standard_group()}), {"--json", out});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("--force"), std::string::npos) << r.err;
  r = compare(make_document({standard_group()}), make_document({standard_group()}), {"--json", out, "--force"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(read_json(out)["verdict"], "PASS");
}

// The headline rule: omni's speedup over the fastest dense algorithm of each
// run. Against ps alone nothing changed; against ring, now much faster, omni
// lost 60% of its lead.
TEST(Compare, SpeedupOverTheBestDenseIsJudged) {
  const std::vector<ResultRecord> base = {make_record("omni", 100, 84000), make_record("ps", 1000, 4u << 20),
                                          make_record("ring", 500, 4u << 20)};
  const std::vector<ResultRecord> cur = {make_record("omni", 100, 84000), make_record("ps", 1000, 4u << 20),
                                         make_record("ring", 200, 4u << 20)};
  const std::string out = temp_path("best-dense.json");
  auto r = compare(make_document({base}), make_document({cur}), {"--metric", "speedup", "--json", out});
  EXPECT_EQ(r.exit_code, 5) << r.out << r.err;
  EXPECT_NE(r.out.find("speedup vs best dense"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fastest dense per run: baseline ring x5; now ring x5"), std::string::npos) << r.out;
  bool saw = false;
  const json verdicts = read_json(out);
  for (const auto& c : verdicts["comparisons"]) {
    if (c.value("against", "") == "ps") {
      EXPECT_EQ(c["verdict"], "PASS");
    }
    if (c.value("against", "") != "best dense") continue;
    saw = true;
    EXPECT_EQ(c["verdict"], "REGRESSION");
    EXPECT_NEAR(c["baseline"].get<double>(), 5.0, 1e-9);
    EXPECT_NEAR(c["current"].get<double>(), 2.0, 1e-9);
  }
  EXPECT_TRUE(saw) << r.out;
  // A sparse algorithm is never the best dense: allgather, faster than
  // everything, leaves the headline of identical files at 2x, a pass.
  auto with_sparse = cur;
  with_sparse.push_back(make_record("allgather", 50, 84000));
  r = compare(make_document({with_sparse}), make_document({with_sparse}), {"--metric", "speedup"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("speedup vs best dense            2.000x"), std::string::npos) << r.out;
}

// Run by run, the fastest dense algorithm may change: each run's omni time
// is divided into that run's fastest dense time, not into the fastest median.
// The spread that widens the CPU tolerance follows the bulk of the runs: one
// stray run does not set it, a wide scatter still does.
TEST(RelativeSpread, OneStrayRunDoesNotSetIt) {
  EXPECT_LT(relative_spread({2.22, 1.48, 1.57, 1.44, 1.34}), 0.3);
  EXPECT_GT(relative_spread({1, 2, 3, 4, 5}), 0.8);
  EXPECT_EQ(relative_spread({7}), 0);
}

TEST(BestDenseSamples, TakeTheFastestDenseOfEachRun) {
  const ResultRecord omni = make_record("omni", std::vector<double>{100, 100, 100}, 84000);
  const ResultRecord ring = make_record("ring", std::vector<double>{500, 150, 400}, 4u << 20);
  const ResultRecord ps = make_record("ps", std::vector<double>{140, 1000, 300}, 4u << 20);
  std::vector<std::string> fastest;
  auto s = best_dense_speedup_samples({&omni}, {{"ring", {&ring}}, {"ps", {&ps}}}, &fastest);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->samples, (std::vector<double>{1.4, 1.5, 3.0}));
  EXPECT_EQ(fastest, (std::vector<std::string>{"ps", "ring", "ps"}));
  EXPECT_DOUBLE_EQ(s->point, 1.5);
  EXPECT_FALSE(best_dense_speedup_samples({&omni}, {}, &fastest).has_value());
}

}  // namespace
}  // namespace omnib
