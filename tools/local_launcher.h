// The built-in launcher: forks one process per rank on this machine, serves
// their rendezvous store, and waits for them. A failing rank makes the others
// fail fast (their links break); stragglers are killed after a grace period.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "engine/status.h"

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

// Runs the ranks and returns the process exit code for the whole run: 0 when
// every rank succeeded, else the exit code of the first rank that failed.
int launch_local(const LocalLaunchPlan& plan);

}  // namespace omnib
