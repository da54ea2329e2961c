#include "tests/support/compare_files.h"

#include <algorithm>
#include <cmath>
#include <fstream>

#include "engine/collective/collective.h"
#include "tools/record/record_speedups.h"

namespace omnib::testing {

using nlohmann::json;

ResultRecord make_record(const std::string& algo, std::vector<double> run_medians, double wire_bytes, uint64_t size,
                         int nodes) {
  ResultRecord r;
  r.algo = algo;
  const CollectiveInfo* info = CollectiveRegistry::instance().find(algo);
  r.dense = info && !info->exploits_sparsity;
  r.config.size_bytes = size;
  r.config.density = 0.01;
  r.config.nodes = nodes;
  r.iters = 10;
  r.repeat = static_cast<int>(run_medians.size());
  std::vector<double> sorted = run_medians;
  std::sort(sorted.begin(), sorted.end());
  r.time_us.median = sorted[sorted.size() / 2];
  for (double m : run_medians) {
    r.runs.push_back({m, m * 2, wire_bytes > 0 ? std::optional<double>(m * 2 * 1e3 / (wire_bytes * nodes))
                                               : std::nullopt});
    r.samples_us.push_back(m);
  }
  r.wire_sent_per_rank_max = wire_bytes;
  r.wire_sent_total = wire_bytes * nodes;
  r.wire_frames_per_rank_max = std::ceil(wire_bytes / 65536);
  r.wire_frames_total = *r.wire_frames_per_rank_max * nodes;
  r.checked = true;
  r.correct = true;
  r.calls_checked = 15;
  return r;
}

ResultRecord make_record(const std::string& algo, double median_us, double wire_bytes, uint64_t size, int nodes) {
  constexpr double kJitter[kSteadyRuns] = {1.00, 1.01, 0.99, 1.02, 0.98};
  std::vector<double> runs;
  for (double j : kJitter) runs.push_back(median_us * j);
  return make_record(algo, runs, wire_bytes, size, nodes);
}

json make_document(std::vector<std::vector<ResultRecord>> groups) {
  json results = json::array();
  for (auto& g : groups) {
    compute_speedups(g);
    for (const auto& r : g) results.push_back(to_json(r));
  }
  return {{"schema_version", kSchemaVersion},
          {"tool", "omni-bench"},
          {"command_line", "omni-bench allreduce --algo omni,ps"},
          {"identity_fields", identity_fields()},
          {"environment", {{"git_revision", "test"}, {"timestamp", "2026-01-01T00:00:00Z"}}},
          {"results", results}};
}

std::string write_result(const std::string& name, const json& doc) {
  static int counter = 0;
  const std::string path = temp_path(std::to_string(++counter) + "-" + name);
  std::ofstream(path) << doc.dump(2);
  return path;
}

std::vector<ResultRecord> standard_group(double omni_us, double omni_bytes) {
  return {make_record("omni", omni_us, omni_bytes), make_record("ps", 1000, 4u << 20)};
}

CliResult compare(const json& baseline, const json& current, std::vector<std::string> extra) {
  std::vector<std::string> args{"compare", write_result("baseline.json", baseline),
                                write_result("current.json", current)};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_cli(args, {}, 60);
}

}  // namespace omnib::testing
