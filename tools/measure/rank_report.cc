#include "tools/measure/rank_report.h"

#include "tools/config/json_fields.h"

namespace omnib {

using nlohmann::json;

json to_json(const RankReport& report) {
  json algos = json::array();
  for (const auto& s : report.algos) algos.push_back(s.to_json());
  return json{{"algos", algos}, {"resources", to_json(report.resources)}};
}

Result<std::vector<RankReport>> parse_rank_reports(const std::vector<std::string>& all, const std::string& name,
                                                   const std::vector<std::string>& algos, int runs, int iters,
                                                   const PeerBounds& bounds) {
  std::vector<RankReport> out;
  for (size_t rank = 0; rank < all.size(); ++rank) {
    const std::string key = "rendezvous value 'gather/" + name + "/" + std::to_string(rank) + "'";
    // Names the rank that sent nonsense, and the likely reasons.
    auto nonsense = [&](const std::string& what) {
      return internal_error("rank " + std::to_string(rank) + " sent a report rank 0 cannot use (" + key + "), " +
                            what + ": is every rank the same omni-bench build, and is the job token (" +
                            "OMNIB_JOB_TOKEN) known to this job alone?");
    };
    json j = parse_untrusted_json(all[rank]);
    if (!j.is_object() || !j.contains("algos") || !j["algos"].is_array() || j["algos"].size() != algos.size())
      return nonsense("not an object holding a list of " + std::to_string(algos.size()) + " measurements");
    RankReport report;
    for (size_t a = 0; a < algos.size(); ++a) {
      auto samples = RankSamples::from_json(j["algos"][a], runs, iters);
      Status s = samples.is_ok() ? check_peer_samples(samples.value(), bounds) : samples.status();
      if (!s.is_ok()) return nonsense("algorithm " + algos[a] + ": " + s.message());
      report.algos.push_back(samples.take());
    }
    auto resources = process_resources_from_json(j.contains("resources") ? j["resources"] : json());
    Status s = resources.is_ok() ? check_peer_resources(resources.value(), bounds) : resources.status();
    if (!s.is_ok()) return nonsense("resources: " + s.message());
    report.resources = resources.take();
    if (report.resources.rank != static_cast<int>(rank))
      return nonsense("resources: reported as rank " + std::to_string(report.resources.rank));
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
