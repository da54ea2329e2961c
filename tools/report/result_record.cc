#include "tools/report/result_record.h"

namespace omnib {

using nlohmann::json;

json ResultRecord::config_key() const {
  return json{{"collective", collective}, {"size_bytes", size_bytes}, {"dtype", dtype},
              {"density", density},       {"block_size", block_size}, {"nodes", nodes},
              {"aggregators", aggregators}, {"overlap", overlap},     {"workload", workload},
              {"device", device},         {"inplace", inplace}};
}

namespace {

json optional_number(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json stats_json(const TimeStats& s) {
  return json{{"median", s.median}, {"p95", s.p95},   {"p99", s.p99},     {"min", s.min},
              {"max", s.max},       {"mean", s.mean}, {"stdev", s.stdev}, {"cv", s.cv()}};
}

TimeStats stats_from(const json& j) {
  TimeStats s;
  s.median = j.value("median", 0.0);
  s.p95 = j.value("p95", 0.0);
  s.p99 = j.value("p99", 0.0);
  s.min = j.value("min", 0.0);
  s.max = j.value("max", 0.0);
  s.mean = j.value("mean", 0.0);
  s.stdev = j.value("stdev", 0.0);
  return s;
}

std::optional<double> number_or_null(const json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  return j[key].get<double>();
}

}  // namespace

json to_json(const ResultRecord& r) {
  json j = r.config_key();
  j["algo"] = r.algo;
  j["count"] = r.count;
  j["seed"] = r.seed;
  j["skipped"] = r.skipped;
  if (r.skipped) j["skip_reason"] = r.skip_reason;
  j["iters"] = r.iters;
  j["time_us"] = stats_json(r.time_us);
  j["samples_us"] = r.samples_us;
  j["algbw_GBps"] = r.algbw_GBps;
  j["busbw_GBps"] = r.busbw_GBps;
  j["busbw_convention"] = "dense: algbw*2(n-1)/n";
  j["wire_bytes"] = {{"sent_per_rank_max", optional_number(r.wire_sent_per_rank_max)},
                     {"sent_total", optional_number(r.wire_sent_total)}};
  if (!r.wire_note.empty()) j["wire_bytes"]["note"] = r.wire_note;
  if (r.link_sent_per_rank_max)
    j["link_bytes"] = {{"sent_per_rank_max", *r.link_sent_per_rank_max},
                       {"sent_total", optional_number(r.link_sent_total)}};
  j["analytic_bytes"] = {{"sent_per_rank_max", r.analytic_sent_per_rank_max},
                         {"sent_total", r.analytic_sent_total}};
  j["measured_density"] = {{"element", r.inputs.element_density},
                           {"block", r.inputs.block_density},
                           {"block_mean", r.inputs.mean_block_density},
                           {"union_block", r.inputs.union_block_density},
                           {"union_element", r.inputs.union_element_density}};
  j["checked"] = r.checked;
  j["wrong_elements"] = r.wrong_elements;
  j["correct"] = r.correct;
  j["speedup_vs"] = r.speedup_vs;
  if (!r.note.empty()) j["note"] = r.note;
  return j;
}

ResultRecord record_from_json(const json& j) {
  ResultRecord r;
  r.collective = j.value("collective", "allreduce");
  r.algo = j.value("algo", "");
  r.size_bytes = j.value("size_bytes", uint64_t{0});
  r.count = j.value("count", uint64_t{0});
  r.dtype = j.value("dtype", "");
  r.density = j.value("density", 0.0);
  r.block_size = j.value("block_size", uint64_t{0});
  r.nodes = j.value("nodes", 0);
  r.aggregators = j.value("aggregators", 0);
  r.overlap = j.value("overlap", "");
  r.workload = j.value("workload", "");
  r.device = j.value("device", "");
  r.inplace = j.value("inplace", false);
  r.seed = j.value("seed", uint64_t{0});
  r.skipped = j.value("skipped", false);
  r.skip_reason = j.value("skip_reason", "");
  r.iters = j.value("iters", 0);
  if (j.contains("time_us")) r.time_us = stats_from(j["time_us"]);
  if (j.contains("samples_us")) r.samples_us = j["samples_us"].get<std::vector<double>>();
  r.algbw_GBps = j.value("algbw_GBps", 0.0);
  r.busbw_GBps = j.value("busbw_GBps", 0.0);
  if (j.contains("wire_bytes")) {
    r.wire_sent_per_rank_max = number_or_null(j["wire_bytes"], "sent_per_rank_max");
    r.wire_sent_total = number_or_null(j["wire_bytes"], "sent_total");
    r.wire_note = j["wire_bytes"].value("note", "");
  }
  if (j.contains("link_bytes")) {
    r.link_sent_per_rank_max = number_or_null(j["link_bytes"], "sent_per_rank_max");
    r.link_sent_total = number_or_null(j["link_bytes"], "sent_total");
  }
  if (j.contains("analytic_bytes")) {
    r.analytic_sent_per_rank_max = j["analytic_bytes"].value("sent_per_rank_max", 0.0);
    r.analytic_sent_total = j["analytic_bytes"].value("sent_total", 0.0);
  }
  if (j.contains("measured_density")) {
    const auto& m = j["measured_density"];
    r.inputs.element_density = m.value("element", 0.0);
    r.inputs.block_density = m.value("block", 0.0);
    r.inputs.mean_block_density = m.value("block_mean", 0.0);
    r.inputs.union_block_density = m.value("union_block", 0.0);
    r.inputs.union_element_density = m.value("union_element", 0.0);
  }
  r.checked = j.value("checked", false);
  r.wrong_elements = j.value("wrong_elements", uint64_t{0});
  r.correct = j.value("correct", false);
  if (j.contains("speedup_vs")) r.speedup_vs = j["speedup_vs"].get<std::map<std::string, double>>();
  r.note = j.value("note", "");
  return r;
}

void compute_speedups(std::vector<ResultRecord>& group) {
  for (auto& r : group) {
    r.speedup_vs.clear();
    if (r.skipped || r.time_us.median <= 0) continue;
    for (const auto& other : group) {
      if (&other == &r || other.skipped || other.time_us.median <= 0) continue;
      r.speedup_vs[other.algo] = other.time_us.median / r.time_us.median;
    }
  }
}

}  // namespace omnib
