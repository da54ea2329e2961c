#include "tools/measure/rank_report.h"

namespace omnib {

using nlohmann::json;

json to_json(const RankReport& report) {
  json algos = json::array();
  for (const auto& s : report.algos) algos.push_back(s.to_json());
  return json{{"algos", algos}, {"resources", to_json(report.resources)}};
}

Result<std::vector<RankReport>> parse_rank_reports(const std::vector<std::string>& all, const std::string& name,
                                                   const std::vector<std::string>& algos, int runs, int iters) {
  std::vector<RankReport> out;
  for (size_t rank = 0; rank < all.size(); ++rank) {
    const std::string key = "rendezvous value 'gather/" + name + "/" + std::to_string(rank) + "'";
    json j = json::parse(all[rank], nullptr, false);
    if (!j.is_object() || !j.contains("algos") || !j["algos"].is_array() || j["algos"].size() != algos.size())
      return internal_error(key + " is not an object holding a list of " + std::to_string(algos.size()) +
                            " measurements (ranks built from different sources?)");
    RankReport report;
    for (size_t a = 0; a < algos.size(); ++a) {
      auto samples = RankSamples::from_json(j["algos"][a], runs, iters);
      if (!samples.is_ok()) return internal_error(key + ", algorithm " + algos[a] + ": " + samples.status().message());
      report.algos.push_back(samples.take());
    }
    auto resources = process_resources_from_json(j.contains("resources") ? j["resources"] : json());
    if (!resources.is_ok()) return internal_error(key + ", resources: " + resources.status().message());
    report.resources = resources.take();
    if (report.resources.rank != static_cast<int>(rank))
      return internal_error(key + ", resources: reported as rank " + std::to_string(report.resources.rank));
    out.push_back(std::move(report));
  }
  return out;
}

std::vector<std::vector<RankSamples>> samples_by_algorithm(std::vector<RankReport>& reports) {
  std::vector<std::vector<RankSamples>> out;
  for (auto& r : reports) {
    if (out.size() < r.algos.size()) out.resize(r.algos.size());
    for (size_t a = 0; a < r.algos.size(); ++a) out[a].push_back(std::move(r.algos[a]));
  }
  return out;
}

}  // namespace omnib
