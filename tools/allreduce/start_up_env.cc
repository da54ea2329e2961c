#include "tools/allreduce/start_up_env.h"

#include <algorithm>
#include <cstdlib>

#include "tools/allreduce/device_tensors.h"
#include "tools/measure/process_resources.h"

namespace omnib {
namespace {

bool any_asks(const std::vector<std::string>& algos) {
  return std::any_of(algos.begin(), algos.end(), [](const std::string& a) {
    const CollectiveInfo* info = CollectiveRegistry::instance().find(a);
    return info != nullptr && info->process_env != nullptr;
  });
}

}  // namespace

std::vector<EnvSetting> merge_process_env(const std::vector<std::string>& algos, const ProcessPlacement& p) {
  std::vector<EnvSetting> merged;
  for (const std::string& algo : algos) {
    const CollectiveInfo* info = CollectiveRegistry::instance().find(algo);
    if (info == nullptr || !info->process_env) continue;
    for (const EnvSetting& s : info->process_env(p)) {
      const bool taken = std::any_of(merged.begin(), merged.end(), [&](const EnvSetting& m) { return m.name == s.name; });
      if (!taken) merged.push_back(s);
    }
  }
  return merged;
}

ProcessPlacement placement_at_start_up(const RunPlan& plan, const LaunchEnv& launch, int visible_gpus) {
  ProcessPlacement p;
  p.rank = launch.rank;
  p.worker = launch.rank < plan.base.nodes;
  if (launch.host_tasks) p.host_workers_at_most = std::min(*launch.host_tasks, plan.base.nodes);
  p.visible_gpus = visible_gpus;
  return p;
}

Status require_single_thread() {
  auto now = read_resources();
  if (!now.is_ok()) return now.status().with_context("before writing the environment: ");
  if (now.value().threads != 1)
    return internal_error("the rank's start-up would write the environment with " +
                          std::to_string(now.value().threads) +
                          " threads running, which may read it meanwhile (please report it with the command line)");
  return Status::ok();
}

Result<std::vector<EnvChange>> write_process_env(const std::vector<EnvSetting>& settings) {
  std::vector<EnvChange> changes;
  for (const EnvSetting& s : settings) {
    EnvChange c{s.name, s.value, std::nullopt};
    if (const char* before = std::getenv(s.name.c_str())) c.previous = before;
    if (setenv(s.name.c_str(), s.value.c_str(), 1) != 0)
      return internal_error("setenv(" + s.name + ") failed: the environment is full or the name is invalid");
    changes.push_back(std::move(c));
  }
  return changes;
}

Result<std::vector<EnvChange>> set_up_process_env(const RunPlan& plan, const LaunchEnv& launch) {
  if (!any_asks(plan.algos)) return std::vector<EnvChange>{};
  OMNIB_RETURN_IF_ERROR(require_single_thread());
  // Only workers use a GPU; NCCL's host ids depend on how many there are.
  const bool worker = launch.rank < plan.base.nodes;
  return write_process_env(merge_process_env(plan.algos, placement_at_start_up(plan, launch, worker ? visible_gpus() : 0)));
}

}  // namespace omnib
