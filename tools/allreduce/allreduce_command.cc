#include "tools/allreduce/allreduce_command.h"

#include <cstdio>
#include <memory>
#include <optional>

#include "tools/allreduce/rank_run.h"
#include "tools/allreduce/device_tensors.h"
#include "tools/allreduce/start_up_env.h"
#include "tools/launch/launch_env.h"
#include "tools/launch/local_launcher.h"
#include "tools/net/emulated_launch.h"
#include "tools/common/atomic_file.h"
#include "tools/report/json_reporter.h"
#include "tools/report/profile_reporter.h"
#include "tools/report/table_reporter.h"
#include "tools/allreduce/run_plan.h"

namespace omnib {
namespace {

int usage_failure(const Status& s) {
  std::fprintf(stderr, "omni-bench: %s\n", s.message().c_str());
  return exit_code(s.code());
}

std::string join(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

}  // namespace

int run_allreduce_command(const AllreduceOptions& options, const std::vector<std::string>& argv) {
  auto launch = detect_launch_env();
  if (!launch.is_ok()) return usage_failure(launch.status());
  const bool is_rank = launch.value().has_value();
  const bool launched_by_us = is_rank && launch.value()->launcher == "omni-bench";
  const int local_ranks = is_rank ? 1 : options.nodes + options.aggregators;
  const std::optional<int> world = is_rank ? std::optional<int>(launch.value()->world) : std::nullopt;
  auto made = plan_allreduce(options, local_ranks, world);
  if (!made.is_ok()) return usage_failure(made.status());
  const RunPlan& plan = made.value();
  // Fail once in the launcher rather than in every rank. It must not touch
  // CUDA itself (ranks are exec'd, but other launchers may fork): the build
  // check is static, the device check is left to the ranks.
  if (plan.base.device == DeviceKind::kCuda && !build_has_cuda_kernels())
    return usage_failure(unavailable_error("--device cuda: " + device_tensors_unavailable_reason() +
                                           "; run with --device cpu"));
  if (is_rank && !launched_by_us && plan.emulate)
    return usage_failure(usage_error("--net emulate runs every rank on this machine under omni-bench's own launcher, "
                                     "but this process was started by " + launch.value()->launcher +
                                     ": drop --net emulate, or run omni-bench without " + launch.value()->launcher));

  if (!is_rank) {
    // The launcher checks what would otherwise fail in every rank.
    for (const std::string& path : {plan.json_path, plan.trace.trace_path}) {
      if (path.empty()) continue;
      Status s = check_output_path(path, plan.force, "--force to replace it");
      if (!s.is_ok()) return usage_failure(s);
    }
    LocalLaunchPlan local;
    local.world = plan.world();
    local.argv = argv;
    local.argv[0] = "/proc/self/exe";
    local.grace = std::chrono::seconds(plan.timeout_s + 5);
    return plan.emulate ? launch_emulated(local, plan.link, plan.tcp) : launch_local(local);
  }

  const LaunchEnv& env = *launch.value();
  // Before anything starts a thread: the only safe time to write the environment.
  auto written = set_up_process_env(plan, env);
  if (!written.is_ok()) return usage_failure(written.status());
  std::vector<std::unique_ptr<Reporter>> reporters;
  if (env.rank == 0) {
    reporters.push_back(std::make_unique<TableReporter>(stdout, options.wide));
    if (plan.trace.profile) reporters.push_back(std::make_unique<ProfileReporter>(stdout));
    // Under our own launcher the parent already checked (and the files may
    // now be ours); under an external launcher rank 0 checks.
    for (const std::string& path : {plan.json_path, plan.trace.trace_path}) {
      if (path.empty() || launched_by_us) continue;
      Status s = check_output_path(path, plan.force, "--force to replace it");
      if (!s.is_ok()) return usage_failure(s);
    }
    if (!plan.json_path.empty()) reporters.push_back(std::make_unique<JsonReporter>(plan.json_path));
  }
  std::vector<std::string> shown = argv;
  shown[0] = "omni-bench";
  return run_allreduce_rank(plan, env, join(shown), std::move(reporters), written.take());
}

}  // namespace omnib
