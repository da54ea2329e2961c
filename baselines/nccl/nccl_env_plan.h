// NCCL's settings for one rank process, decided from where the rank sits.
// NCCL takes its algorithm and its host id only from the environment
// (NCCL_ALGO, NCCL_HOSTID: NCCL 2.28's ncclConfig_t has no field for
// either), so the harness writes them once, at the rank's start-up
// (engine/collective/process_env.h), and never again. Needs no CUDA: the
// decisions are tested on every build.
//
// NCCL refuses two ranks of one host on one GPU. When a host may run more
// workers than it has GPUs, every worker there gets a host id of its own
// ("omnib-rank<rank>": distinct across the job), so NCCL sees separate hosts
// and talks between them through its socket transport. This replaces a
// user's NCCL_HOSTID, which a launcher hands to every rank alike (the report
// says so); a rank whose host has a GPU per worker keeps the user's value.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "baselines/nccl/nccl_catalog.h"
#include "engine/collective/process_env.h"

namespace omnib {

inline constexpr const char* kNcclAlgoVar = "NCCL_ALGO";
inline constexpr const char* kNcclHostIdVar = "NCCL_HOSTID";

// "omnib-rank3".
std::string nccl_host_id(int rank);

// Whether the worker at `p` needs a host id of its own: its host may run
// more workers than the GPUs it sees.
bool needs_own_host_id(const ProcessPlacement& p);

// NCCL_ALGO for the variant (workers only: aggregators make no
// communicator), and NCCL_HOSTID where needs_own_host_id says so.
std::vector<EnvSetting> nccl_process_env(const NcclVariant& variant, const ProcessPlacement& p);

// The GPU worker `local_index` of `local_workers` on one host uses (local
// index modulo the GPUs), and how many of those workers use it.
int nccl_gpu_of(int local_index, int gpus);
int ranks_on_gpu(int gpu, int local_workers, int gpus);

// Why `variant` cannot run in this process: start-up wrote NCCL_ALGO for
// another NCCL variant listed before it (`written`: what start-up wrote).
// nullopt when it can, or when nothing was written.
std::optional<std::string> algo_conflict(const NcclVariant& variant, const std::vector<EnvChange>& written);

// Why NCCL cannot run on this rank once the ranks have met: its GPU is
// shared (`sharing` ranks on GPU `gpu`) but start-up gave it no host id of
// its own (its launcher did not say how many ranks its host runs, or said
// too few). nullopt when it can.
std::optional<std::string> shared_gpu_problem(int gpu, int sharing, bool own_host_id);

}  // namespace omnib
