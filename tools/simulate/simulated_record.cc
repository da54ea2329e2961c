#include "tools/simulate/simulated_record.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "engine/collective/collective.h"
#include "tools/schedule/schedule_catalog.h"

namespace omnib {
namespace {

ResultRecord base_record(const std::string& algo, const RunConfig& config, const InputStats& inputs) {
  ResultRecord r;
  r.algo = algo;
  r.config = config;
  r.inputs = inputs;
  r.simulated = true;
  if (const CollectiveInfo* info = CollectiveRegistry::instance().find(algo)) r.dense = !info->exploits_sparsity;
  return r;
}

}  // namespace

ResultRecord simulated_record(const std::string& algo, const SimulatedPoint& p) {
  ResultRecord r = base_record(algo, p.config, p.inputs.stats);
  const double us = p.outcome.time_s * 1e6;
  r.iters = 1;
  r.warmup = 0;
  r.samples_us = {us};
  r.time_us = summarize(r.samples_us);
  r.runs = {RunSummary{us, 0, std::nullopt}};
  const int n = p.config.nodes;
  r.algbw_GBps = us > 0 ? static_cast<double>(p.config.size_bytes) / (us * 1e3) : 0;
  r.busbw_GBps = n > 0 ? r.algbw_GBps * 2.0 * (n - 1) / n : 0;
  // What the schedule put on the simulated wire, per call.
  const std::vector<uint64_t> sent = p.schedule.sent_per_rank();
  r.wire_sent_per_rank_max = static_cast<double>(sent.empty() ? 0 : *std::max_element(sent.begin(), sent.end()));
  r.wire_sent_total = static_cast<double>(std::accumulate(sent.begin(), sent.end(), uint64_t{0}));
  std::vector<uint64_t> frames(static_cast<size_t>(p.schedule.ranks()), 0);
  for (const ScheduledMessage& m : p.schedule.messages())
    if (!m.local()) ++frames[static_cast<size_t>(m.src)];
  r.wire_frames_per_rank_max = static_cast<double>(*std::max_element(frames.begin(), frames.end()));
  r.wire_frames_total = static_cast<double>(p.outcome.flows);
  if (const CollectiveInfo* info = CollectiveRegistry::instance().find(algo)) {
    const WireCost model = info->analytic_cost(p.inputs.cost);
    r.analytic_sent_per_rank_max = model.sent_per_rank_max;
    r.analytic_sent_total = model.sent_total;
    r.analytic_exact = model.exact;
  }
  char how[256];
  std::snprintf(how, sizeof(how), "simulated (SimGrid CM02, %s): %llu flows, at most %llu at once; %.1f s to simulate",
                p.config.topology.c_str(), static_cast<unsigned long long>(p.outcome.flows),
                static_cast<unsigned long long>(p.outcome.peak_flows), p.wall_s);
  r.note = how;
  if (!p.schedule.note().empty()) r.note += "; " + p.schedule.note();
  return r;
}

ResultRecord unscheduled_record(const std::string& algo, const RunConfig& config, const InputStats& inputs) {
  ResultRecord r = base_record(algo, config, inputs);
  r.skipped = true;
  std::string names;
  for (const std::string& s : scheduled_algorithms()) names += (names.empty() ? "" : ", ") + s;
  r.skip_reason = "the simulator has no message schedule for " + algo + " (it has: " + names + ")";
  return r;
}

}  // namespace omnib
