// The built-in launcher: forks one process per rank on this machine, serves
// their rendezvous store, and waits for them. Each run gets a fresh job token
// (OMNIB_JOB_TOKEN in every rank's environment) that guards the store and the
// links. A rank that fails makes the others fail fast: the launcher posts its
// failure to the store (ranks waiting there stop at once) and their links
// break; stragglers are killed after a grace period.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "engine/base/status.h"

namespace omnib {

struct LocalLaunchPlan {
  int world = 1;
  std::vector<std::string> argv;  // the command line each rank re-runs
  std::chrono::seconds grace{30};  // how long survivors get after a failure
  // Optional: wraps a rank's command (e.g. to enter a network namespace) and
  // returns the command to run; empty means run argv as is.
  std::function<std::vector<std::string>(int rank, const std::vector<std::string>& argv)> wrap_command;
  // Optional: extra environment (name, value) for a rank.
  std::function<std::vector<std::pair<std::string, std::string>>(int rank)> rank_env;
  std::function<std::string(int rank)> bind_host;  // address rank listens on; default 127.0.0.1
  std::string store_host = "127.0.0.1";
};

// The whole run's exit code from its ranks' ends, whatever order they are
// reaped in (docs/exit-codes.md): 1 when a rank was killed by a signal the
// launcher did not send (a crash); else the first code other than 6 (a rank
// that stops because another failed reports 6); else 6; else 0, or 130 when
// the run was interrupted.
class RunVerdict {
 public:
  // `status` as waitpid gives it; `killed_by_us`: the launcher was already
  // stopping the ranks (interrupt, or the grace period ran out).
  void add(int status, bool killed_by_us);
  int code(bool interrupted) const;

 private:
  bool crashed_ = false;
  int first_failure_ = 0;
  int first_unavailable_ = 0;
};

// Runs the ranks and returns the process exit code for the whole run
// (RunVerdict).
int launch_local(const LocalLaunchPlan& plan);

}  // namespace omnib
