#include "tools/allreduce/algorithm_slots.h"

#include <nlohmann/json.hpp>

#include "tools/common/json_fields.h"
#include "tools/measure/setup_time.h"

namespace omnib {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// Creates the algorithms no rank turned down; the others get their reason.
Result<std::vector<AlgoSlot>> create_slots(const RunPlan& plan, const CollectiveSetup& setup,
                                           const std::vector<std::vector<std::string>>& reasons) {
  std::vector<AlgoSlot> slots;
  const int rank = setup.job.rank;
  for (size_t i = 0; i < plan.algos.size(); ++i) {
    AlgoSlot slot;
    slot.info = CollectiveRegistry::instance().find(plan.algos[i]);
    for (int r = 0; r < setup.job.world() && slot.skip_reason.empty(); ++r) {
      const std::string& reason = reasons[static_cast<size_t>(r)][i];
      if (!reason.empty()) slot.skip_reason = reason + (r == rank ? "" : " (on rank " + std::to_string(r) + ")");
    }
    if (slot.skip_reason.empty()) {
      const auto t0 = Clock::now();
      auto c = slot.info->create(setup);
      if (!c.is_ok()) return c.status().with_context(plan.algos[i] + ": ");
      slot.collective = c.take();
      slot.setup_us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    }
    slots.push_back(std::move(slot));
  }
  return slots;
}

}  // namespace

CollectiveSetup collective_setup(const RunPlan& plan, const JobLayout& job, const RankRendezvous& met,
                                 const LaunchEnv& launch) {
  CollectiveSetup setup;
  setup.job = job;
  setup.dtype = plan.base.dtype;
  setup.device = plan.base.device;
  setup.timeout = plan.timeout();
  setup.links = met.links.get();
  setup.transport = plan.transport;
  setup.omni = omni_settings(plan.base);
  setup.gloo = GlooSettings{launch.bind_host, met.store.get(), met.job_id};
  setup.nccl = NcclSettings{met.store.get(), met.job_id};
  const auto me = static_cast<size_t>(job.rank);
  for (int r = 0; r < job.nodes; ++r) {
    if (met.hosts[static_cast<size_t>(r)] != met.hosts[me]) continue;
    if (r < job.rank) ++setup.local_index;
    if (r != job.rank) ++setup.local_workers;
  }
  return setup;
}

std::string local_unavailability(const RunPlan& plan, const CollectiveSetup& setup) {
  json mine = json::array();
  for (const auto& name : plan.algos) {
    const CollectiveInfo* info = CollectiveRegistry::instance().find(name);
    auto reason = info->unavailable_reason(setup);
    if (!reason && plan.base.device == DeviceKind::kCuda && !info->device_tensors)
      reason = "runs on host tensors only: compare it with --device cpu";
    mine.push_back(reason ? *reason : "");
  }
  return mine.dump();
}

Result<std::vector<std::vector<std::string>>> parse_unavailability(const std::vector<std::string>& all,
                                                                   size_t algorithms) {
  std::vector<std::vector<std::string>> out;
  for (size_t r = 0; r < all.size(); ++r) {
    const std::string key = "gather/availability/" + std::to_string(r);
    json j = parse_untrusted_json(all[r]);
    if (!j.is_array() || j.size() != algorithms)
      return internal_error("rendezvous value '" + key + "' is not a list of " + std::to_string(algorithms) +
                            " strings (ranks built from different sources?)");
    std::vector<std::string> reasons;
    for (const auto& v : j) {
      if (!v.is_string()) return internal_error("rendezvous value '" + key + "' holds a non-string");
      reasons.push_back(v.get<std::string>());
    }
    out.push_back(std::move(reasons));
  }
  return out;
}

Result<std::vector<AlgoSlot>> set_up_algorithms(const RunPlan& plan, const CollectiveSetup& setup, Store& store,
                                                Clock::time_point started) {
  const JobLayout& job = setup.job;
  auto all = store_all_gather(store, "availability", job.rank, job.world(), local_unavailability(plan, setup));
  if (!all.is_ok()) return all.status();
  auto reasons = parse_unavailability(all.value(), plan.algos.size());
  if (!reasons.is_ok()) return reasons.status();
  auto slots = create_slots(plan, setup, reasons.value());
  if (!slots.is_ok()) return slots.status();
  std::vector<double> setup_us;
  for (const auto& s : slots.value()) setup_us.push_back(s.setup_us);
  auto max_setup_us = max_setup_us_over_ranks(store, job.rank, job.world(), setup_us, started);
  if (!max_setup_us.is_ok()) return max_setup_us.status();
  // Rank 0 alone gets the maxima (the others an empty list).
  for (size_t a = 0; a < max_setup_us.value().size(); ++a) slots.value()[a].setup_us = max_setup_us.value()[a];
  bool any_runs = false;
  std::string why;
  for (const AlgoSlot& s : slots.value()) {
    any_runs |= s.collective != nullptr;
    why += "\n  " + s.info->name + ": " + s.skip_reason;
  }
  if (!any_runs) return unavailable_error("none of the requested algorithms can run here:" + why);
  return slots;
}

}  // namespace omnib
