// Who launched this process and where its rendezvous store is: the local
// launcher (OMNI_BENCH_*), mpirun, Slurm, or a torchrun-style environment.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "engine/auth/job_token.h"
#include "engine/base/status.h"

namespace omnib {

struct LaunchEnv {
  int rank = 0;
  int world = 1;
  std::string launcher;       // "omni-bench", "mpirun", "slurm", "torchrun", "mpich"
  std::string store_address;  // host:port of the rendezvous store
  bool host_store = false;    // this rank serves the store (external launchers: rank 0)
  std::string bind_host;      // interface address to listen on for peer links
  uint32_t job_id = 0;        // 0: take it from the store
  // The job secret every store connection and link hello proves
  // (OMNIB_JOB_TOKEN). nullopt: the run is unauthenticated.
  std::optional<JobToken> token;
  // The local launcher's process id (it serves the store), so that rank 0
  // can report its resources; 0 under other launchers.
  int launcher_pid = 0;
  // How many ranks the launcher put on this rank's host: every rank under
  // the local launcher; the launcher's own count under others
  // (OMPI_COMM_WORLD_LOCAL_SIZE, MPI_LOCALNRANKS, SLURM_TASKS_PER_NODE,
  // LOCAL_WORLD_SIZE); nullopt when it gives none. Known before the ranks
  // meet, when the rank's start-up writes NCCL's environment.
  std::optional<int> host_tasks;
};

// How this rank's rendezvous is protected, for the run's header and JSON:
// "authenticated" or "unauthenticated".
std::string rendezvous_mode(const LaunchEnv& env);

// nullopt when no launcher environment is present (the process should launch
// ranks itself). A launcher environment that is incomplete or inconsistent is
// an error that says which variables to set.
Result<std::optional<LaunchEnv>> detect_launch_env();

// Variables the local launcher sets in each child.
namespace launch_vars {
constexpr const char* kRank = "OMNI_BENCH_RANK";
constexpr const char* kWorld = "OMNI_BENCH_WORLD_SIZE";
constexpr const char* kStore = "OMNI_BENCH_STORE";
constexpr const char* kJobId = "OMNI_BENCH_JOB_ID";
constexpr const char* kBind = "OMNI_BENCH_BIND";  // also honoured under external launchers
constexpr const char* kLauncherPid = "OMNI_BENCH_LAUNCHER_PID";  // set by the local launcher only
// The job secret, 32 hex digits. The local launcher makes a fresh one per run;
// under mpirun/srun/torchrun the user exports the same value to every rank.
constexpr const char* kJobToken = "OMNIB_JOB_TOKEN";
}  // namespace launch_vars

}  // namespace omnib
