// The honest headline: every record's speedup over the fastest dense
// algorithm of its configuration (vs_best_dense), in the records, the JSON,
// the table's `vs dense` column and its summary line, and in a real run.
#include <gtest/gtest.h>
#include <sstream>
#include <map>
#include <iterator>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "engine/build_features.h"
#include "tests/support/e2e_fixture.h"
#include "tools/allreduce/allreduce_options.h"
#include "tools/record/record_speedups.h"
#include "tools/record/result_record.h"
#include "tools/report/table_reporter.h"

namespace omnib {
namespace {

using nlohmann::json;

ResultRecord record(const std::string& algo, bool dense, double median_us, uint64_t size = 4u << 20) {
  ResultRecord r;
  r.algo = algo;
  r.dense = dense;
  r.config.size_bytes = size;
  r.time_us.median = median_us;
  r.runs = {RunSummary{median_us, 0, std::nullopt}};
  r.checked = true;
  r.correct = true;
  return r;
}

ResultRecord skipped(const std::string& algo, bool dense) {
  ResultRecord r = record(algo, dense, 0);
  r.skipped = true;
  r.skip_reason = "not here";
  return r;
}

// omni 100 us, ps 300, ring 200 (the fastest dense), allgather 80 (sparse,
// faster than any dense: never the best dense), gloo skipped.
std::vector<ResultRecord> group(uint64_t size = 4u << 20, double omni_us = 100) {
  std::vector<ResultRecord> g = {record("omni", false, omni_us, size), record("ps", true, 300, size),
                                 record("ring", true, 200, size), record("allgather", false, 80, size),
                                 skipped("gloo-ring-chunked", true)};
  compute_speedups(g);
  return g;
}

TEST(BestDense, EveryRecordAgainstTheFastestDenseOfItsGroup) {
  const auto g = group();
  const std::vector<double> want = {2.0, 200.0 / 300, 1.0, 2.5};
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(g[i].algo);
    ASSERT_TRUE(g[i].vs_best_dense.has_value());
    EXPECT_EQ(g[i].vs_best_dense->algo, "ring");
    EXPECT_DOUBLE_EQ(g[i].vs_best_dense->speedup, want[i]);
  }
  EXPECT_FALSE(g[4].vs_best_dense.has_value());  // skipped
  // Without a dense algorithm there is no best dense.
  std::vector<ResultRecord> sparse_only = {record("omni", false, 100), record("allgather", false, 80)};
  compute_speedups(sparse_only);
  EXPECT_FALSE(sparse_only[0].vs_best_dense.has_value());
}

TEST(BestDense, JsonCarriesDenseAndVsBestDense) {
  const auto g = group();
  const json omni = to_json(g[0]);
  EXPECT_EQ(omni["dense"], false);
  EXPECT_EQ(omni["vs_best_dense"]["algo"], "ring");
  EXPECT_DOUBLE_EQ(omni["vs_best_dense"]["speedup"].get<double>(), 2.0);
  EXPECT_EQ(to_json(g[1])["dense"], true);
  EXPECT_EQ(to_json(g[4])["dense"], true);  // skipped records say it too

  std::vector<std::string> defaulted;
  auto back = record_from_json(omni, kSchemaVersion, &defaulted);
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_FALSE(back.value().dense);
  ASSERT_TRUE(back.value().vs_best_dense.has_value());
  EXPECT_EQ(back.value().vs_best_dense->algo, "ring");
  EXPECT_TRUE(defaulted.empty());

  // A record written before "dense" existed takes it from the registry.
  json old = to_json(g[1]);
  old.erase("dense");
  old.erase("vs_best_dense");
  back = record_from_json(old, kSchemaVersion, &defaulted);
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_TRUE(back.value().dense);  // ps
  EXPECT_EQ(defaulted, std::vector<std::string>{"dense"});
  old["vs_best_dense"] = {{"algo", 3}};
  EXPECT_FALSE(record_from_json(old, kSchemaVersion, nullptr).is_ok());
}

// The table of `groups`, as printed.
std::string table_of(const std::vector<std::vector<ResultRecord>>& groups, bool wide = false) {
  char* buf = nullptr;
  size_t len = 0;
  std::FILE* f = open_memstream(&buf, &len);
  {
    TableReporter t(f, wide);
    RunContext ctx;
    ctx.environment = json::object();
    ctx.configuration = {{"algos", {"omni", "ps", "ring", "allgather", "gloo-ring-chunked"}}};
    EXPECT_TRUE(t.begin(ctx).is_ok());
    for (const auto& g : groups) EXPECT_TRUE(t.add_group(g).is_ok());
    EXPECT_TRUE(t.finish().is_ok());
  }
  std::fclose(f);
  std::string out(buf, len);
  std::free(buf);
  return out;
}

// Without schedstat the CPU wait is not measured, and the footer says so,
// with the preemptions that remain; with it, the share.
TEST(BestDense, CpuWaitFooterWithAndWithoutSchedstat) {
  auto without = group();
  for (auto& r : without) r.cpu = CpuUsage{100, 10, 50, 1.0, {}, 2.5};
  const std::string no_wait = table_of({without});
  EXPECT_NE(no_wait.find("not measured (this kernel gives no /proc schedstat)"), std::string::npos) << no_wait;
  EXPECT_NE(no_wait.find("preempted up to 2.5"), std::string::npos) << no_wait;
  auto with = group();
  for (auto& r : with) r.cpu = CpuUsage{100, 10, 50, 1.0, {0.04}, 2.5};
  const std::string measured = table_of({with});
  EXPECT_NE(measured.find("up to 4% of a call"), std::string::npos) << measured;
  EXPECT_EQ(measured.find("preempted"), std::string::npos) << measured;
}

TEST(BestDense, TableShowsTheColumnTheBestDenseAndTheHeadline) {
  const std::string one = table_of({group()});
  EXPECT_NE(one.find("vs dense"), std::string::npos) << one;
  EXPECT_NE(one.find("#   best dense: ring (200.0 us)"), std::string::npos) << one;
  EXPECT_NE(one.find("# omni vs best dense   : 2.00x (ring)"), std::string::npos) << one;
  // The omni row: vs 1st 1.00x (it is the first), vs dense 2.00x.
  const size_t row = one.find("\nomni ");
  ASSERT_NE(row, std::string::npos);
  const std::string omni_row = one.substr(row + 1, one.find('\n', row + 1) - row - 1);
  EXPECT_NE(omni_row.find("1.00x    2.00x"), std::string::npos) << omni_row;

  const std::string two = table_of({group(1u << 20, 250), group(4u << 20, 100)});
  EXPECT_NE(two.find("# omni vs best dense   : 0.80x to 2.00x over 2 sizes (lowest: 0.80x vs ring at 1M)"),
            std::string::npos)
      << two;
}

// Every ratio of the table reads one way: above 1, omni (the first
// algorithm) is the faster. vs 1st = this row's time / omni's; vs dense (sparse
// rows) = the best dense time / this row's. Checked against the times in the
// same table, narrow and wide.
TEST(BestDense, EveryRatioColumnReadsTheWayItsTimesSay) {
  for (bool wide : {false, true}) {
    SCOPED_TRACE(wide ? "wide" : "narrow");
    const std::string table = table_of({group()}, wide);
    std::istringstream lines(table);
    std::map<std::string, std::vector<std::string>> rows;  // algo -> its cells
    bool header = true;  // the first line that is not a comment names the columns
    for (std::string line; std::getline(lines, line);) {
      std::istringstream words(line);
      std::vector<std::string> cells{std::istream_iterator<std::string>(words), std::istream_iterator<std::string>()};
      if (cells.empty() || cells[0][0] == '#' || line.find("skipped:") != std::string::npos) continue;
      if (header) {
        // Sizes print as two words ("0 B"): the ratios are read from the end.
        ASSERT_EQ(std::vector<std::string>(cells.end() - 5, cells.end()),
                  (std::vector<std::string>{"vs", "1st", "vs", "dense", "#wrong"}));
        header = false;
        continue;
      }
      const size_t algo = wide ? 3 : 0;
      if (cells.size() > algo + 3 && cells[algo] != "median") rows[cells[algo]] = cells;
    }
    const size_t time = wide ? 7 : 1;
    auto vs_first = [](const std::vector<std::string>& c) { return c[c.size() - 3]; };
    auto vs_dense = [](const std::vector<std::string>& c) { return c[c.size() - 2]; };
    const double omni = std::stod(rows.at("omni")[time]), best_dense = std::stod(rows.at("ring")[time]);
    for (const auto& [algo, cells] : rows) {
      SCOPED_TRACE(algo);
      const double t = std::stod(cells[time]);
      const double first_ratio = std::stod(vs_first(cells));
      EXPECT_NEAR(first_ratio, t / omni, 0.005);
      EXPECT_EQ(first_ratio > 1, omni < t);
      if (algo == "omni" || algo == "allgather") {
        const double dense_ratio = std::stod(vs_dense(cells));
        EXPECT_NEAR(dense_ratio, best_dense / t, 0.005);
        EXPECT_EQ(dense_ratio > 1, t < best_dense);
      } else {
        EXPECT_EQ(vs_dense(cells), "-");  // a dense row against the best dense says nothing
      }
    }
  }
}

// The default table fits 120 columns; --wide keeps every column.
TEST(BestDense, TheNarrowTableFits120Columns) {
  std::istringstream lines(table_of({group(), group(1u << 20, 250)}));
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 120u) << line;
  EXPECT_NE(table_of({group()}, true).find("blkdens"), std::string::npos);
}

// A real run: every record says whether it is dense, and its vs_best_dense
// matches the records' own medians.
TEST(BestDenseEndToEnd, RecordsAndTableAgree) {
  const json doc = testing::run_allreduce_ok(
      {"--algo", "omni,ps,ring,allgather", "--nodes", "3", "-b", "1M", "-e", "1M", "--density", "0.05"});
  testing::expect_all_rows_correct(doc, 4);
  std::string best;
  double best_us = 0;
  for (const auto& r : doc["results"]) {
    EXPECT_EQ(r["dense"], r["algo"] == "ps" || r["algo"] == "ring") << r["algo"];
    const double t = r["time_us"]["median"].get<double>();
    if (r["dense"].get<bool>() && (best.empty() || t < best_us)) {
      best = r["algo"];
      best_us = t;
    }
  }
  for (const auto& r : doc["results"]) {
    ASSERT_TRUE(r["vs_best_dense"].is_object()) << r.dump();
    EXPECT_EQ(r["vs_best_dense"]["algo"], best);
    EXPECT_DOUBLE_EQ(r["vs_best_dense"]["speedup"].get<double>(), best_us / r["time_us"]["median"].get<double>());
  }
}

// Without --algo the run measures the strongest dense baselines this build
// has for the device, says so in the JSON, and none of them is skipped.
TEST(DefaultAlgorithms, IncludeTheStrongestDenseBaselinesOfThisBuild) {
  std::vector<std::string> cpu = {"omni", "ps", "ring"};
  if (OMNIB_WITH_GLOO) cpu.push_back("gloo-ring-chunked");
  cpu.push_back("allgather");
  EXPECT_EQ(default_algos(DeviceKind::kCpu), cpu);
  std::vector<std::string> cuda = {"omni", "ps"};
  if (OMNIB_WITH_NCCL) cuda.push_back("nccl");
  EXPECT_EQ(default_algos(DeviceKind::kCuda), cuda);

  const json doc = testing::run_allreduce_ok({"--nodes", "2", "-b", "64K", "-e", "64K", "--density", "0.1"});
  ASSERT_TRUE(doc.contains("configuration"));
  EXPECT_EQ(doc["configuration"]["algos"], json(cpu));
  EXPECT_EQ(doc["configuration"]["algos_default"], true);
  testing::expect_all_rows_correct(doc, cpu.size());
  // Named algorithms are not the default.
  const json named = testing::run_allreduce_ok({"--algo", "omni,ring", "--nodes", "2", "-b", "64K", "-e", "64K"});
  EXPECT_EQ(named["configuration"]["algos_default"], false);
}

}  // namespace
}  // namespace omnib
