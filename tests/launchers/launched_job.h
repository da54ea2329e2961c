// One omni-bench job started by a real external launcher (Open MPI's mpirun,
// Slurm's srun) on this host, and every check such a job must pass: one job
// of all the launcher's ranks (not one job per rank), every result correct,
// and the rendezvous proving the job token the ranks were given.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/cli_runner.h"

namespace omnib::testing {

// How the job is started.
struct LaunchSpec {
  // The launcher's command line up to the program it starts, argv[0] a full
  // path (find_on_path): {"/usr/bin/mpirun", "-np", "4", ...}.
  std::vector<std::string> launcher;
  int ranks = 4;
  // Variables taken out of every rank's environment before omni-bench starts
  // (`env -u`): the sabotage that shows the checks catch a rank that cannot
  // see what the launcher told it.
  std::vector<std::string> withheld;
  bool export_token = true;  // OMNIB_JOB_TOKEN in the launcher's environment
  // MASTER_ADDR and MASTER_PORT (a free loopback port) in the launcher's
  // environment; false for a batch script that chooses them itself.
  bool export_rendezvous = true;
  // A batch submission (sbatch --parsable): the launcher returns at once
  // with the job's id, and the job's end is awaited through scontrol (every
  // 0.1 s, where sbatch --wait looks after 2 s and then 8 more). Its output
  // is read back from `output_file` (the job's --output).
  bool batch = false;
  std::string output_file;
};

struct LaunchedJob {
  CliResult cli;        // the launcher's exit, stdout and stderr
  nlohmann::json doc;   // the JSON rank 0 wrote; null when there is none
  std::string token;    // the OMNIB_JOB_TOKEN exported ("" when none)
};

// The full path of `tool` on PATH; "" when it is not there.
std::string find_on_path(const std::string& tool);

// Runs `spec.launcher... omni-bench allreduce` (a small checked run of omni
// and ring, JSON to a temporary file) with MASTER_ADDR, MASTER_PORT and
// OMNIB_JOB_TOKEN exported as spec says, as a user of that launcher would.
LaunchedJob run_launched_job(const LaunchSpec& spec);

// Every way `job` falls short of one correct, authenticated job of
// `spec.ranks` ranks started by `launcher` (the JSON's "mpirun", "slurm"),
// one line each; empty when it passes.
std::vector<std::string> launched_job_problems(const LaunchedJob& job, const LaunchSpec& spec,
                                               const std::string& launcher);

// The problems, one per line, for a failure message.
std::string joined_lines(const std::vector<std::string>& lines);

}  // namespace omnib::testing
