#include "tools/compare/record_matching.h"

#include <set>
#include <sstream>

#include "tools/size_parse.h"

namespace omnib {
namespace {

using nlohmann::json;

struct Grouped {
  std::vector<std::string> order;  // keys in order of first appearance
  std::map<std::string, ConfigRecords> configs;
  std::map<std::string, ResultRecord> first;  // a representative record per key
};

Grouped group_by_config(const ResultFile& file) {
  Grouped g;
  for (const auto& r : file.records) {
    const std::string key = r.config_key().dump();
    if (!g.configs.count(key)) {
      g.order.push_back(key);
      g.first[key] = r;
    }
    g.configs[key].by_algo[r.algo].push_back(r);
  }
  return g;
}

std::string value_text(const std::string& field, const json& v) {
  if (field == "size_bytes" && v.is_number_unsigned()) return format_size(v.get<uint64_t>());
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

// "4M, 8M" for one field over all records of a file.
std::string distinct_values(const ResultFile& file, const std::string& field) {
  std::set<std::string> seen;
  std::string out;
  for (const auto& r : file.records) {
    std::string text = value_text(field, r.config_key()[field]);
    if (seen.insert(text).second) out += (out.empty() ? "" : ", ") + text;
  }
  return out;
}

std::string explain_no_overlap(const ResultFile& baseline, const ResultFile& current) {
  if (baseline.records.empty()) return "'" + baseline.path + "' holds no results";
  if (current.records.empty()) return "'" + current.path + "' holds no results";
  std::string differs;
  const json fields = baseline.records.front().config_key();
  for (const auto& item : fields.items()) {
    const std::string b = distinct_values(baseline, item.key());
    const std::string c = distinct_values(current, item.key());
    if (b != c) differs += "\n  " + item.key() + ": baseline " + b + "; current " + c;
  }
  if (differs.empty()) differs = "\n  each parameter takes the same values, but no combination of them appears in both";
  return "no configuration in common between '" + baseline.path + "' and '" + current.path +
         "'; they differ in:" + differs +
         "\nrun the current benchmark with the baseline's parameters (see its command_line)";
}

}  // namespace

std::string config_label(const ResultRecord& r) {
  std::ostringstream s;
  if (r.collective != "allreduce") s << r.collective << " ";
  s << format_size(r.size_bytes) << " " << r.dtype << " density " << r.density << " block " << r.block_size
    << " nodes " << r.nodes;
  if (r.aggregators) s << " aggregators " << r.aggregators;
  s << " overlap " << r.overlap << " " << r.workload << " " << r.device;
  if (r.inplace) s << " inplace";
  return s.str();
}

Result<Matching> match_configurations(const ResultFile& baseline, const ResultFile& current, uint64_t min_size) {
  const Grouped base = group_by_config(baseline);
  const Grouped cur = group_by_config(current);
  Matching m;
  for (const auto& key : cur.order) {
    const ResultRecord& rep = cur.first.at(key);
    auto it = base.configs.find(key);
    if (it == base.configs.end()) {
      m.only_in_current.push_back(config_label(rep));
      continue;
    }
    if (rep.size_bytes < min_size) {
      ++m.below_min_size;
      continue;
    }
    MatchedConfig mc;
    mc.key = rep.config_key();
    mc.label = config_label(rep);
    mc.size_bytes = rep.size_bytes;
    mc.baseline = it->second;
    mc.current = cur.configs.at(key);
    m.common.push_back(std::move(mc));
  }
  for (const auto& key : base.order)
    if (!cur.configs.count(key)) m.only_in_baseline.push_back(config_label(base.first.at(key)));

  if (m.common.empty() && m.below_min_size == 0) return usage_error(explain_no_overlap(baseline, current));
  if (m.common.empty())
    return usage_error("every configuration the files share is smaller than --min-size (" +
                       std::to_string(m.below_min_size) + " left out): lower --min-size");
  return m;
}

}  // namespace omnib
