// `omni-bench plot`: from a small result file with density, node-count and
// size sweeps, every expected figure is written as a valid PNG and SVG.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/cli_runner.h"

namespace omnib {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr int kPlotLimitSeconds = 600;  // matplotlib starts slowly on a busy machine

json record(const std::string& algo, uint64_t size, int nodes, double density, bool correct) {
  const double t = (algo == "ring" ? 400.0 : 100.0 * density * 10) * static_cast<double>(size >> 20) + nodes;
  const double wire = algo == "ring" ? 2.0 * static_cast<double>(size) : 2.0 * density * static_cast<double>(size);
  return json{{"collective", "allreduce"},
              {"algo", algo},
              {"size_bytes", size},
              {"count", size / 4},
              {"dtype", "float"},
              {"density", density},
              {"block_size", 256},
              {"nodes", nodes},
              {"aggregators", 0},
              {"overlap", "random"},
              {"workload", "blocks"},
              {"device", "cpu"},
              {"inplace", false},
              {"seed", 1},
              {"skipped", false},
              {"iters", 3},
              {"time_us", {{"median", t}, {"p95", 1.2 * t}, {"min", 0.9 * t}, {"max", 1.3 * t}}},
              {"algbw_GBps", static_cast<double>(size) / t / 1e3},
              {"busbw_GBps", static_cast<double>(size) / t / 1e3 * 2 * (nodes - 1) / nodes},
              {"wire_bytes", {{"sent_per_rank_max", wire}, {"sent_total", wire * nodes}}},
              {"analytic_bytes", {{"sent_per_rank_max", 0.95 * wire}, {"sent_total", 0.95 * wire * nodes}}},
              {"checked", true},
              {"wrong_elements", correct ? 0 : 5},
              {"correct", correct}};
}

// A record() in schema 2's shape: the configuration under "config" (on
// emulated 25 Mbit/s links), with the run summaries that schema added.
json schema_two(json r) {
  json config = json::object();
  for (const char* k : {"collective", "size_bytes", "dtype", "density", "block_size", "nodes", "aggregators", "overlap",
                        "workload", "seed"}) {
    if (!r.contains(k)) continue;
    config[k] = r[k];
    r.erase(k);
  }
  const json later_fields = {{"device", "cpu"},      {"inplace", false},  {"net", "emulate"},
                             {"link_rate_bps", 25'000'000}, {"link_delay_ns", 0}, {"transport", "tcp"},
                             {"shard_layout", "contiguous"}};
  for (const auto& [k, v] : later_fields.items()) config[k] = v;
  r["config"] = config;
  r["warmup"] = 1;
  r["repeat"] = 1;
  r["runs"] = json::array(
      {{{"median_us", r["time_us"]["median"]}, {"cpu_us_per_call", 1.0}, {"cpu_ns_per_wire_byte", nullptr}}});
  r["wrong_calls"] = 0;
  r["calls_checked"] = 4;
  return r;
}

// A density sweep at 1 MiB on 4 nodes, a node sweep at density 0.1 and a
// size sweep on 4 nodes; one wrong result and one skipped algorithm.
std::string write_results() {
  json results = json::array();
  const uint64_t mib = 1 << 20;
  for (const std::string algo : {"omni", "ring", "sparse_allgather"}) {
    for (double d : {0.01, 0.1, 0.5}) results.push_back(record(algo, mib, 4, d, !(algo == "ring" && d == 0.5)));
    for (int nodes : {2, 8}) results.push_back(record(algo, mib, nodes, 0.1, true));
    results.push_back(record(algo, 4 * mib, 4, 0.1, true));
  }
  json skipped = record("nccl", mib, 4, 0.1, true);
  skipped["skipped"] = true;
  skipped["skip_reason"] = "built without NCCL";
  results.push_back(skipped);
  const std::string path = testing::temp_path("results.json");
  std::ofstream(path) << json{{"schema_version", 1}, {"tool", "omni-bench"}, {"results", results}}.dump(1);
  return path;
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(PlotCommand, WritesEveryFigureAsPngAndSvg) {
  const std::string results = write_results();
  const std::string out = testing::temp_path("figures");
  // Every axis of every figure reads: at least three labelled ticks.
  auto r = testing::run_cli({"plot", results, "-o", out}, {"OMNIB_PLOT_MIN_TICKS=3"}, kPlotLimitSeconds);
  if (r.exit_code == 6) GTEST_SKIP() << "no Python with matplotlib here: " << r.err;
  ASSERT_EQ(r.exit_code, 0) << r.err;

  std::map<std::string, std::set<std::string>> by_stem;  // stem -> extensions
  for (const auto& entry : fs::directory_iterator(out))
    by_stem[entry.path().stem().string()].insert(entry.path().extension().string());
  for (const std::string expected :
       {"time_vs_density", "speedup_vs_density", "vs_best_vs_density", "time_vs_nodes", "bandwidth_vs_size",
        "wire_bytes_vs_density"}) {
    bool found = false;
    for (const auto& [stem, exts] : by_stem) found |= stem.rfind(expected, 0) == 0;
    EXPECT_TRUE(found) << "no " << expected << " figure in " << out;
  }
  // Configurations without a density sweep get measured/analytic bars: the
  // 2- and 8-node runs and the 4 MiB run.
  size_t bars = 0;
  for (const auto& [stem, exts] : by_stem) bars += stem.rfind("wire_bytes__", 0) == 0;
  EXPECT_EQ(bars, 3u);

  const std::string png_signature = "\x89PNG\r\n\x1a\n";
  for (const auto& [stem, exts] : by_stem) {
    EXPECT_EQ(exts, (std::set<std::string>{".png", ".svg"})) << stem;
    const std::string png = slurp(fs::path(out) / (stem + ".png"));
    EXPECT_EQ(png.substr(0, 8), png_signature) << stem;
    EXPECT_NE(slurp(fs::path(out) / (stem + ".svg")).find("<svg"), std::string::npos) << stem;
    // The command lists every file it wrote.
    EXPECT_NE(r.out.find(stem + ".png"), std::string::npos) << stem;
  }
  // The skipped algorithm is not drawn; the wrong result is flagged.
  for (const auto& [stem, exts] : by_stem) {
    const std::string svg = slurp(fs::path(out) / (stem + ".svg"));
    EXPECT_EQ(svg.find("nccl"), std::string::npos) << stem;
  }
  EXPECT_NE(slurp(fs::path(out) / "time_vs_density.svg").find("wrong result"), std::string::npos);
}

TEST(PlotCommand, OneAggregatorPerWorkerIsOneNodeSeries) {
  // `sweep --nodes 2,4,8 --aggregators nodes` changes both counts together;
  // the time-vs-nodes figure still draws it as one series, beside the
  // colocated one.
  json results = json::array();
  for (int nodes : {2, 4, 8}) {
    json dedicated = record("omni", 1 << 20, nodes, 0.1, true);
    dedicated["aggregators"] = nodes;
    results.push_back(dedicated);
  }
  for (int nodes : {2, 8}) results.push_back(record("omni", 1 << 20, nodes, 0.1, true));
  const std::string path = testing::temp_path("aggregators.json");
  std::ofstream(path) << json{{"schema_version", 1}, {"tool", "omni-bench"}, {"results", results}}.dump(1);
  const std::string out = testing::temp_path("figures");
  auto r = testing::run_cli({"plot", path, "-o", out}, {}, kPlotLimitSeconds);
  if (r.exit_code == 6) GTEST_SKIP() << "no Python with matplotlib here: " << r.err;
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::set<std::string> titles;
  for (const auto& entry : fs::directory_iterator(out)) {
    const std::string stem = entry.path().stem().string();
    if (stem.rfind("time_vs_nodes", 0) != 0 || entry.path().extension() != ".svg") continue;
    const std::string svg = slurp(entry.path());
    if (svg.find("aggregators=one per worker") != std::string::npos) titles.insert("per worker");
    // Colocated shards are the default: the title leaves the field out.
    if (svg.find("aggregators=") == std::string::npos) titles.insert("colocated");
  }
  EXPECT_EQ(titles, (std::set<std::string>{"per worker", "colocated"})) << r.out;
}

// The time-vs-nodes figure labels each point with its CPU-wait share, so a
// point the host set the time of shows it; records without one get none.
TEST(PlotCommand, NodeScalingLabelsEachPointWithItsCpuWait) {
  json results = json::array();
  for (const char* algo : {"omni", "ring"})
    for (int nodes : {2, 4, 8}) {
      json r = schema_two(record(algo, 1 << 20, nodes, 0.1, true));
      if (std::string(algo) == "omni")  // ring's were not measured: no labels
        r["cpu"] = {{"user_us_per_call", 1.0},       {"sys_us_per_call", 1.0},
                    {"rank_max_us_per_call", 1.0},   {"ns_per_wire_byte", 1.0},
                    {"wait_share_per_rank", {0.01 * nodes}}};
      results.push_back(r);
    }
  const std::string path = testing::temp_path("waits.json");
  std::ofstream(path) << json{{"schema_version", 2}, {"tool", "omni-bench"}, {"results", results}}.dump(1);
  const std::string out = testing::temp_path("figures");
  auto r = testing::run_cli({"plot", path, "-o", out}, {}, kPlotLimitSeconds);
  if (r.exit_code == 6) GTEST_SKIP() << "no Python with matplotlib here: " << r.err;
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string svg = slurp(fs::path(out) / "time_vs_nodes.svg");
  for (const char* label : {">2%<", ">4%<", ">8%<", "CPU wait of the slowest rank"})
    EXPECT_NE(svg.find(label), std::string::npos) << label;
}

// The same sweep at two emulated link rates: two configurations, drawn as
// two series (figures told apart by the link), never merged into one.
TEST(PlotCommand, LinkRatesAreSeriesOfTheirOwn) {
  json results = json::array();
  for (uint64_t bps : {50'000'000ull, 100'000'000ull})
    for (double d : {0.01, 0.1}) {
      json r = record("omni", 1 << 20, 4, d, true);
      json config = {{"collective", "allreduce"}, {"size_bytes", 1 << 20}, {"dtype", "float"}, {"density", d},
                     {"block_size", 256}, {"nodes", 4}, {"aggregators", 0}, {"overlap", "random"},
                     {"workload", "blocks"}, {"seed", 1}, {"device", "cpu"}, {"inplace", false},
                     {"net", "emulate"}, {"link_rate_bps", bps}, {"link_delay_ns", 0}, {"transport", "tcp"},
                     {"shard_layout", "contiguous"}};
      for (const auto& [k, v] : config.items()) r.erase(k);
      r["config"] = config;
      r["warmup"] = 1;
      r["repeat"] = 1;
      r["runs"] = json::array({{{"median_us", r["time_us"]["median"]}, {"cpu_us_per_call", 1.0},
                                {"cpu_ns_per_wire_byte", nullptr}}});
      r["wrong_calls"] = 0;
      r["calls_checked"] = 4;
      results.push_back(r);
    }
  const std::string path = testing::temp_path("rates.json");
  std::ofstream(path) << json{{"schema_version", 2}, {"tool", "omni-bench"}, {"results", results}}.dump(1);
  const std::string out = testing::temp_path("figures");
  auto r = testing::run_cli({"plot", path, "-o", out}, {}, kPlotLimitSeconds);
  if (r.exit_code == 6) GTEST_SKIP() << "no Python with matplotlib here: " << r.err;
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::set<std::string> figures;
  for (const auto& entry : fs::directory_iterator(out))
    if (entry.path().extension() == ".png" && entry.path().stem().string().rfind("time_vs_density", 0) == 0)
      figures.insert(entry.path().stem().string());
  EXPECT_EQ(figures, (std::set<std::string>{"time_vs_density__link=50mbit", "time_vs_density__link=100mbit"}))
      << r.out;
}

TEST(PlotCommand, MissingInputIsAUsageError) {
  auto r = testing::run_cli({"plot", "/nonexistent/results.json", "-o", testing::temp_path("none")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no such result file"), std::string::npos) << r.err;
}

TEST(PlotCommand, NoMatplotlibSaysWhatToInstall) {
  const std::string results = write_results();
  auto r = testing::run_cli({"plot", results, "-o", testing::temp_path("none")}, {"OMNIB_PYTHON=/bin/false"});
  EXPECT_EQ(r.exit_code, 6);
  EXPECT_NE(r.err.find("install python3-matplotlib"), std::string::npos) << r.err;
}

TEST(PlotCommand, MissingScriptSaysWhereToPointIt) {
  const std::string results = write_results();
  auto r = testing::run_cli({"plot", results, "-o", testing::temp_path("none")}, {"OMNIB_PLOTS_DIR=/nonexistent"});
  EXPECT_EQ(r.exit_code, 6);
  EXPECT_NE(r.err.find("OMNIB_PLOTS_DIR"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace omnib
