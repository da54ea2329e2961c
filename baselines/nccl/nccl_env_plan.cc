#include "baselines/nccl/nccl_env_plan.h"

namespace omnib {

std::string nccl_host_id(int rank) { return "omnib-rank" + std::to_string(rank); }

bool needs_own_host_id(const ProcessPlacement& p) {
  return p.worker && p.visible_gpus > 0 && p.host_workers_at_most && *p.host_workers_at_most > p.visible_gpus;
}

std::vector<EnvSetting> nccl_process_env(const NcclVariant& variant, const ProcessPlacement& p) {
  if (!p.worker) return {};
  std::vector<EnvSetting> env{{kNcclAlgoVar, variant.nccl_algo}};
  if (needs_own_host_id(p)) env.push_back({kNcclHostIdVar, nccl_host_id(p.rank)});
  return env;
}

std::optional<std::string> algo_conflict(const NcclVariant& variant, const std::vector<EnvChange>& written) {
  const EnvChange* algo = find_env_change(written, kNcclAlgoVar);
  if (algo == nullptr || algo->value == variant.nccl_algo) return std::nullopt;
  std::string other = "another NCCL algorithm";
  for (const NcclVariant& v : kNcclVariants)
    if (algo->value == v.nccl_algo) other = v.name;
  return std::string("needs NCCL_ALGO=") + variant.nccl_algo + ", but the ranks set NCCL_ALGO=" + algo->value +
         " for " + other + ", listed before it (NCCL reads its algorithm only from the environment, which a rank "
         "writes once, at start-up, before its other threads can read it): measure " + variant.name +
         " in a run without " + other;
}

int nccl_gpu_of(int local_index, int gpus) { return gpus > 0 ? local_index % gpus : 0; }

int ranks_on_gpu(int gpu, int local_workers, int gpus) {
  if (gpus <= 0) return local_workers;
  return local_workers / gpus + (gpu < local_workers % gpus ? 1 : 0);
}

std::optional<std::string> shared_gpu_problem(int gpu, int sharing, bool own_host_id) {
  if (sharing <= 1 || own_host_id) return std::nullopt;
  return std::to_string(sharing) + " workers of this host share GPU " + std::to_string(gpu) +
         ", but at start-up this rank's launcher did not say that its host runs more workers than GPUs, so the "
         "rank has no NCCL_HOSTID of its own and NCCL would refuse two ranks of one host on one GPU: export "
         "LOCAL_WORLD_SIZE=<ranks on each host> to every rank, or run at most one worker per GPU";
}

}  // namespace omnib
