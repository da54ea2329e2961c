// How many ranks a launcher put on this rank's host, from the variables it
// sets: what decides, before the ranks meet, whether workers may share a GPU
// (baselines/nccl/nccl_env_plan.h).
#pragma once

#include <optional>
#include <string>

namespace omnib {

// Slurm's compact list of tasks per node ("2(x3),1": three nodes of two
// tasks, then one of one) at node `node` (SLURM_NODEID); nullopt when the
// list is malformed or shorter.
std::optional<int> slurm_tasks_on_node(const std::string& tasks_per_node, int node);

// The count the launcher named `launcher` (LaunchEnv::launcher) gives:
// OMPI_COMM_WORLD_LOCAL_SIZE (mpirun), MPI_LOCALNRANKS (mpich),
// SLURM_TASKS_PER_NODE at SLURM_NODEID (slurm), else LOCAL_WORLD_SIZE
// (torchrun, or set by hand); nullopt when none holds a count.
std::optional<int> host_tasks_from_env(const std::string& launcher);

}  // namespace omnib
