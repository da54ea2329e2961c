// `omni-bench compare`: the CI performance gate, run as the real binary on
// result files crafted here.
#include <fstream>

#include <gtest/gtest.h>

#include "tests/cli_runner.h"
#include "tools/report/result_record.h"

namespace omnib {
namespace {

using nlohmann::json;
using testing::read_json;
using testing::run_cli;
using testing::temp_path;

// One algorithm's record of a 4M, 4-node configuration.
ResultRecord make_record(const std::string& algo, double median_us, double wire_bytes,
                         std::vector<double> samples = {}, uint64_t size = 4u << 20, int nodes = 4) {
  ResultRecord r;
  r.algo = algo;
  r.size_bytes = size;
  r.count = size / 4;
  r.dtype = "float";
  r.density = 0.01;
  r.block_size = 256;
  r.nodes = nodes;
  r.overlap = "random";
  r.workload = "blocks";
  r.device = "cpu";
  r.iters = samples.empty() ? 10 : static_cast<int>(samples.size());
  r.time_us.median = median_us;
  r.samples_us = std::move(samples);
  r.wire_sent_per_rank_max = wire_bytes;
  r.wire_sent_total = wire_bytes * nodes;
  r.checked = true;
  r.correct = true;
  return r;
}

// A result document holding the given configurations (speedups filled in).
json make_document(std::vector<std::vector<ResultRecord>> groups) {
  json results = json::array();
  for (auto& g : groups) {
    compute_speedups(g);
    for (const auto& r : g) results.push_back(to_json(r));
  }
  return {{"schema_version", kSchemaVersion},
          {"tool", "omni-bench"},
          {"command_line", "omni-bench allreduce --algo omni,ps"},
          {"environment", {{"git_revision", "test"}, {"timestamp", "2026-01-01T00:00:00Z"}}},
          {"results", results}};
}

std::string write(const std::string& name, const json& doc) {
  const std::string path = temp_path(name);
  std::ofstream(path) << doc.dump(2);
  return path;
}

// omni at 100 us and ps at 1000 us: speedup 10x.
std::vector<ResultRecord> standard_group(double omni_us = 100, double omni_bytes = 84000) {
  return {make_record("omni", omni_us, omni_bytes), make_record("ps", 1000, 4u << 20)};
}

testing::CliResult compare(const json& baseline, const json& current, std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"compare", write("baseline.json", baseline), write("current.json", current)};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_cli(args, {}, 60);
}

TEST(Compare, IdenticalFilesPass) {
  const json doc = make_document({standard_group()});
  auto r = compare(doc, doc);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("speedup vs ps"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("wire bytes/rank"), std::string::npos) << r.out;
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

TEST(Compare, MoreWireBytesFail) {
  auto r = compare(make_document({standard_group(100, 84000)}), make_document({standard_group(100, 88200)}));
  EXPECT_EQ(r.exit_code, 5) << r.out << r.err;
  EXPECT_NE(r.out.find("wire bytes/rank"), std::string::npos);
  EXPECT_NE(r.out.find("+5.00%"), std::string::npos) << r.out;
}

TEST(Compare, FewerWireBytesAreAnImprovement) {
  auto r = compare(make_document({standard_group(100, 84000)}), make_document({standard_group(100, 42000)}));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("IMPROVED"), std::string::npos) << r.out;
}

TEST(Compare, NoiseInsideTolerancePasses) {
  // Speedup 5% lower, bytes 0.5% higher: both inside the default tolerances.
  auto r = compare(make_document({standard_group(100, 84000)}), make_document({standard_group(105.2, 84420)}));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("REGRESSION"), std::string::npos) << r.out;
}

TEST(Compare, ToleranceFlagsAreHonoured) {
  auto r = compare(make_document({standard_group(100, 84000)}), make_document({standard_group(105.2, 84420)}),
                   {"--tolerance", "0.02", "--bytes-tolerance", "0.001"});
  EXPECT_EQ(r.exit_code, 5) << r.out << r.err;
}

TEST(Compare, LostCorrectnessFails) {
  auto current = standard_group();
  current[0].correct = false;
  current[0].wrong_elements = 17;
  auto r = compare(make_document({standard_group()}), make_document({current}));
  EXPECT_EQ(r.exit_code, 5) << r.out << r.err;
  EXPECT_NE(r.out.find("correct"), std::string::npos);
}

TEST(Compare, MetricFlagRestrictsTheRules) {
  auto r = compare(make_document({standard_group(100)}), make_document({standard_group(200)}), {"--metric", "bytes"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("speedup vs"), std::string::npos) << r.out;
  r = compare(make_document({standard_group()}), make_document({standard_group()}), {"--metric", "latency"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("bytes, speedup, time, correct"), std::string::npos) << r.err;
}

TEST(Compare, AbsoluteTimesOnlyWhenAsked) {
  // Both algorithms 50% slower: the speedup holds, only absolute time shows it.
  auto slow = standard_group(150);
  slow[1].time_us.median = 1500;
  const json base = make_document({standard_group(100)}), cur = make_document({slow});
  auto r = compare(base, cur);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  r = compare(base, cur, {"--absolute"});
  EXPECT_EQ(r.exit_code, 5) << r.out << r.err;
  EXPECT_NE(r.out.find("median time"), std::string::npos) << r.out;
  r = compare(base, cur, {"--metric", "time"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("--absolute"), std::string::npos) << r.err;
}

TEST(Compare, MinSizeLeavesSmallConfigurationsOut) {
  auto small_base = standard_group();
  auto small_cur = standard_group(300);
  for (auto* g : {&small_base, &small_cur})
    for (auto& rec : *g) rec.size_bytes = 64 << 10;
  const json base = make_document({small_base, standard_group()});
  const json cur = make_document({small_cur, standard_group()});
  EXPECT_EQ(compare(base, cur).exit_code, 5);
  auto r = compare(base, cur, {"--min-size", "1M"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("smaller than 1M"), std::string::npos) << r.out;
}

TEST(Compare, AlgorithmsMissingOnOneSideAreNotedNotJudged) {
  auto current = standard_group();
  current[1].skipped = true;
  current[1].skip_reason = "no GPU";
  current.push_back(make_record("ring", 900, 3u << 20));
  auto r = compare(make_document({standard_group()}), make_document({current}));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("note: ps: ran in the baseline, skipped: no GPU now"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("note: ring: new (not run in the baseline)"), std::string::npos) << r.out;
}

TEST(Compare, SubjectFlagChoosesWhoseSpeedupsAreChecked) {
  auto r = compare(make_document({standard_group()}), make_document({standard_group()}), {"--subject", "ps"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("speedup vs omni"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("speedup vs ps"), std::string::npos) << r.out;
}

TEST(Compare, MismatchedSchemaVersionExits2) {
  json cur = make_document({standard_group()});
  cur["schema_version"] = kSchemaVersion + 1;
  auto r = compare(make_document({standard_group()}), cur);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("schema_version"), std::string::npos) << r.err;
}

TEST(Compare, NoCommonConfigurationExits2AndSaysWhatDiffers) {
  std::vector<ResultRecord> other{make_record("omni", 100, 84000, {}, 8u << 20, 8),
                                  make_record("ps", 1000, 8u << 20, {}, 8u << 20, 8)};
  auto r = compare(make_document({standard_group()}), make_document({other}));
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("no configuration in common"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("size_bytes: baseline 4M; current 8M"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nodes: baseline 4; current 8"), std::string::npos) << r.err;
}

TEST(Compare, UnreadableOrInvalidFilesExit2) {
  const std::string good = write("good.json", make_document({standard_group()}));
  auto r = run_cli({"compare", temp_path("missing.json"), good});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("cannot read"), std::string::npos) << r.err;

  const std::string broken = temp_path("broken.json");
  std::ofstream(broken) << "{\"schema_version\": 1, \"results\": [";
  r = run_cli({"compare", good, broken});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not valid JSON"), std::string::npos) << r.err;

  const std::string other = write("other.json", json{{"hello", "world"}});
  r = run_cli({"compare", good, other});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not an omni-bench result file"), std::string::npos) << r.err;
}

// Per-iteration samples: ps steady at 1000 us, omni spread widely.
const std::vector<double> kBaseOmni{70, 150, 90, 180, 110, 130, 60, 170, 100, 140, 80, 120};

std::vector<ResultRecord> sampled_group(const std::vector<double>& omni) {
  std::vector<double> sorted = omni;
  std::sort(sorted.begin(), sorted.end());
  const double median = (sorted[5] + sorted[6]) / 2;
  return {make_record("omni", median, 84000, omni), make_record("ps", 1000, 4u << 20, std::vector<double>(12, 1000))};
}

TEST(Compare, OverlappingNoisySamplesWithSmallShiftAreNoise) {
  // Median speedup drops 11.5% (beyond the 10% tolerance), but the samples
  // overlap so much that the shift is not significant.
  std::vector<double> shifted;
  for (double t : kBaseOmni) shifted.push_back(t + 15);
  auto r = compare(make_document({sampled_group(kBaseOmni)}), make_document({sampled_group(shifted)}));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("NOISE"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("per-iteration ratios"), std::string::npos) << r.out;
}

TEST(Compare, ClearShiftInSamplesFails) {
  std::vector<double> doubled;
  for (double t : kBaseOmni) doubled.push_back(t * 2);
  auto r = compare(make_document({sampled_group(kBaseOmni)}), make_document({sampled_group(doubled)}));
  EXPECT_EQ(r.exit_code, 5) << r.out << r.err;
  EXPECT_NE(r.out.find("REGRESSION"), std::string::npos) << r.out;
}

TEST(Compare, RepeatedRecordsAreSamples) {
  // Six runs per file, no per-iteration samples: the run medians are tested.
  std::vector<std::vector<ResultRecord>> base, cur;
  for (int i = 0; i < 6; ++i) {
    base.push_back({make_record("omni", 100 + i, 84000)});
    cur.push_back({make_record("omni", 130 + i, 84000)});
  }
  auto r = compare(make_document(base), make_document(cur), {"--absolute", "--json", temp_path("v.json")});
  EXPECT_EQ(r.exit_code, 5) << r.out << r.err;
  EXPECT_NE(r.out.find("6/6 run medians"), std::string::npos) << r.out;
}

TEST(Compare, JsonOutputHoldsTheVerdicts) {
  const std::string out = temp_path("verdicts.json");
  auto r = compare(make_document({standard_group(100, 84000)}), make_document({standard_group(200, 84000)}),
                   {"--json", out});
  ASSERT_EQ(r.exit_code, 5) << r.out << r.err;
  const json doc = read_json(out);
  EXPECT_EQ(doc["verdict"], "REGRESSION");
  EXPECT_EQ(doc["regressions"], 1);
  EXPECT_EQ(doc["rules"]["subject"], "omni");
  bool saw_speedup = false, saw_bytes = false;
  for (const auto& c : doc["comparisons"]) {
    if (c["metric"] == "speedup") {
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

}  // namespace
}  // namespace omnib
