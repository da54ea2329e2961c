#include "tools/allreduce/rank_records.h"

#include "tools/measure/peer_bounds.h"
#include "tools/measure/rank_report.h"
#include "tools/record/record_speedups.h"

namespace omnib {

RecordFrame record_frame(const AlgoSlot& slot, const RunConfig& config, const RunPlan& plan, int nodes) {
  return RecordFrame{slot.info->name, config, plan.iters, plan.warmup, plan.repeat, plan.check, nodes};
}

std::vector<ResultRecord> build_records(const std::vector<AlgoSlot>& slots, const JobLayout& job,
                                        const RunConfig& config, const InputStats& stats, const InputSupport* support,
                                        const std::function<void(size_t, ResultRecord&)>& outcome) {
  CostInputs cost;
  cost.nodes = job.nodes;
  cost.aggregators = job.aggregators;
  cost.count = config.count();
  cost.elem_size = dtype_size(config.dtype);
  cost.stats = stats;
  cost.omni = omni_settings(config);
  cost.support = support;
  std::vector<ResultRecord> group;
  for (size_t a = 0; a < slots.size(); ++a) {
    const AlgoSlot& s = slots[a];
    ResultRecord r;
    r.algo = s.info->name;
    r.dense = !s.info->exploits_sparsity;
    r.config = config;
    r.inputs = stats;
    const WireCost model = s.info->analytic_cost(cost);
    r.analytic_sent_per_rank_max = model.sent_per_rank_max;
    r.analytic_sent_total = model.sent_total;
    r.analytic_exact = model.exact;
    if (!s.collective) {
      r.skipped = true;
      r.skip_reason = s.skip_reason;
      group.push_back(r);
      continue;
    }
    outcome(a, r);
    const double seconds = r.time_us.median * 1e-6;
    r.algbw_GBps = seconds > 0 ? static_cast<double>(config.size_bytes) / seconds / 1e9 : 0;
    r.busbw_GBps = job.nodes > 1 ? r.algbw_GBps * 2.0 * (job.nodes - 1) / job.nodes : r.algbw_GBps;
    if (!r.wire_sent_per_rank_max) r.wire_note = s.collective->wire_note();
    r.note = s.collective->run_note();
    r.setup_us = s.setup_us;
    group.push_back(r);
  }
  compute_speedups(group);
  return group;
}

Result<std::vector<std::vector<RankSamples>>> gather_samples(const SampleGather& g, std::vector<AlgoSlot>& slots,
                                                             RunResources& resources, const std::string& name,
                                                             int iters, uint64_t elements) {
  RankReport mine;
  auto own = resources.mine();
  if (!own.is_ok()) return own.status();
  mine.resources = own.take();
  for (auto& s : slots) {
    mine.algos.push_back(std::move(s.samples));
    s.samples = RankSamples(g.repeat);
  }
  auto all = store_gather_to_root(g.store, name, g.job.rank, g.job.world(), to_json(mine).dump());
  if (!all.is_ok()) return all.status();
  if (g.job.rank != 0) return std::vector<std::vector<RankSamples>>{};
  std::vector<std::string> names;
  for (const auto& s : slots) names.push_back(s.info->name);
  // Nothing any rank measured can be longer than rank 0 has been running.
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - g.started).count();
  auto reports = parse_rank_reports(all.value(), name, names, g.repeat, iters, PeerBounds::for_run(seconds, elements));
  if (!reports.is_ok()) return reports.status();
  std::vector<ProcessResources> processes;
  for (const auto& r : reports.value()) processes.push_back(r.resources);
  resources.update(std::move(processes));
  return samples_by_algorithm(reports.value());
}

}  // namespace omnib
