// The environment a rank process's algorithms need (CollectiveInfo::
// process_env: NCCL's NCCL_ALGO and NCCL_HOSTID), written once at the rank's
// start-up, before it meets the other ranks: then the process has one
// thread, and setenv cannot race a getenv of the links', lanes' or NCCL's
// threads, which all start later. The values written reach the collectives
// through CollectiveSetup::process_env; nothing writes the environment again.
#pragma once

#include <string>
#include <vector>

#include "engine/base/status.h"
#include "engine/collective/collective.h"
#include "tools/allreduce/run_plan.h"
#include "tools/launch/launch_env.h"

namespace omnib {

// Every setting `algos` ask for at `p`, each variable once. One process has
// one environment: where two algorithms need different values of a variable
// (nccl and nccl-tree: NCCL_ALGO Ring and Tree), the first in `algos` sets
// it, and the other, finding another value in CollectiveSetup::process_env,
// reports that it cannot run.
std::vector<EnvSetting> merge_process_env(const std::vector<std::string>& algos, const ProcessPlacement& p);

// Where this rank sits, from its launcher; `visible_gpus` as counted.
ProcessPlacement placement_at_start_up(const RunPlan& plan, const LaunchEnv& launch, int visible_gpus);

// Internal error unless this process has a single thread.
Status require_single_thread();

// Writes `settings` and returns what each variable held before. Call it
// only after require_single_thread().
Result<std::vector<EnvChange>> write_process_env(const std::vector<EnvSetting>& settings);

// All of the above for this rank of `plan`, when some algorithm of the run
// asks for an environment: checks for a single thread, counts the GPUs (in a
// child process: CUDA's driver starts threads of its own;
// StartUpEnv.CountingTheGpusStartsNoThread checks that none start here),
// then writes.
Result<std::vector<EnvChange>> set_up_process_env(const RunPlan& plan, const LaunchEnv& launch);

}  // namespace omnib
