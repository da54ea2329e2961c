#include "tools/compare/record_matching.h"

#include <set>

#include "tools/size_parse.h"

namespace omnib {
namespace {

using nlohmann::json;

struct Grouped {
  std::vector<std::string> order;  // keys in order of first appearance
  std::map<std::string, ConfigRecords> configs;
  std::map<std::string, RunConfig> first;  // the configuration of each key
};

Grouped group_by_config(const ResultSide& side) {
  Grouped g;
  for (const auto& file : side.files) {
    for (const auto& r : file.records) {
      const std::string key = r.config.key_text();
      if (!g.configs.count(key)) {
        g.order.push_back(key);
        g.first[key] = r.config;
      }
      g.configs[key].by_algo[r.algo].push_back(r);
    }
  }
  return g;
}

std::string value_text(const std::string& field, const json& v) {
  if (field == "size_bytes" && v.is_number_unsigned()) return format_size(v.get<uint64_t>());
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

// "4M, 8M" for one identity field over every record of a side.
std::string distinct_values(const ResultSide& side, const std::string& field) {
  std::set<std::string> seen;
  std::string out;
  for (const auto& file : side.files)
    for (const auto& r : file.records) {
      const std::string text = value_text(field, r.config.key()[field]);
      if (seen.insert(text).second) out += (out.empty() ? "" : ", ") + text;
    }
  return out;
}

std::string explain_no_overlap(const ResultSide& baseline, const ResultSide& current) {
  auto empty = [](const ResultSide& s) {
    for (const auto& f : s.files)
      if (!f.records.empty()) return false;
    return true;
  };
  if (empty(baseline)) return "'" + baseline.describe() + "' holds no results";
  if (empty(current)) return "'" + current.describe() + "' holds no results";
  std::string differs;
  for (const auto& field : identity_fields()) {
    const std::string b = distinct_values(baseline, field);
    const std::string c = distinct_values(current, field);
    if (b != c) differs += "\n  " + field + ": baseline " + b + "; current " + c;
  }
  if (differs.empty()) differs = "\n  each field takes the same values, but no combination of them appears in both";
  return "no configuration in common between '" + baseline.describe() + "' and '" + current.describe() +
         "'; they differ in:" + differs + "\nrun the current benchmark with the baseline's parameters (see its command_line)";
}

}  // namespace

Result<Matching> match_configurations(const ResultSide& baseline, const ResultSide& current, uint64_t min_size) {
  const Grouped base = group_by_config(baseline);
  const Grouped cur = group_by_config(current);
  Matching m;
  for (const auto& key : cur.order) {
    const RunConfig& config = cur.first.at(key);
    auto it = base.configs.find(key);
    if (it == base.configs.end()) {
      m.only_in_current.push_back(config.label());
      continue;
    }
    if (config.size_bytes < min_size) {
      ++m.below_min_size;
      continue;
    }
    MatchedConfig mc;
    mc.key = config.key();
    mc.label = config.label();
    mc.size_bytes = config.size_bytes;
    mc.baseline = it->second;
    mc.current = cur.configs.at(key);
    m.common.push_back(std::move(mc));
  }
  for (const auto& key : base.order)
    if (!cur.configs.count(key) && base.first.at(key).size_bytes >= min_size)
      m.only_in_baseline.push_back(base.first.at(key).label());

  if (m.common.empty() && m.below_min_size == 0) return usage_error(explain_no_overlap(baseline, current));
  if (m.common.empty())
    return usage_error("every configuration the sides share is smaller than --min-size (" +
                       std::to_string(m.below_min_size) + " left out): lower --min-size");
  return m;
}

Status check_runs_pair_up(const Matching& matching) {
  auto runs = [](const ConfigRecords& side, const std::string& algo) {
    size_t n = 0;
    auto it = side.by_algo.find(algo);
    if (it != side.by_algo.end())
      for (const auto& r : it->second)
        if (!r.skipped) n += r.runs.size();
    return n;
  };
  for (const auto& config : matching.common)
    for (const auto& [algo, _] : config.baseline.by_algo) {
      const size_t b = runs(config.baseline, algo), c = runs(config.current, algo);
      if (b == 0 || c == 0 || b == c) continue;
      return usage_error("--paired: " + algo + " at " + config.label + " has " + std::to_string(b) +
                         " baseline runs and " + std::to_string(c) +
                         " current runs; paired sides need the same runs in the same order (run i of one beside "
                         "run i of the other): give both sides the same files' counterparts");
    }
  return Status::ok();
}

}  // namespace omnib
