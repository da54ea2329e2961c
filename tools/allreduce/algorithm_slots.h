// The algorithms one rank of `omni-bench allreduce` runs: every rank says
// which of the requested ones it cannot run and why, and an algorithm some
// rank cannot run is skipped on every rank (so that all make the same calls);
// the others are created, and their set-up time is the slowest rank's.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "engine/base/status.h"
#include "engine/collective/collective.h"
#include "engine/store/store.h"
#include "tools/allreduce/run_plan.h"
#include "tools/launch/launch_env.h"
#include "tools/launch/rank_rendezvous.h"
#include "tools/measure/rank_samples.h"

namespace omnib {

struct AlgoSlot {
  const CollectiveInfo* info = nullptr;
  std::unique_ptr<Collective> collective;  // null: skipped
  std::string skip_reason;                 // non-empty: not run
  double setup_us = 0;                     // creating the collective: the max over ranks
  RankSamples samples;                     // this rank's measurements of the configuration in progress
};

// What this rank gives every collective it creates.
CollectiveSetup collective_setup(const RunPlan& plan, const JobLayout& job, const RankRendezvous& met,
                                 const LaunchEnv& launch);

// This rank's reason not to run each of plan.algos ("" where it can), as
// the JSON list it sends the others.
std::string local_unavailability(const RunPlan& plan, const CollectiveSetup& setup);

// Every rank's list, one reason per algorithm, checked before use: a list
// of another length or holding a non-string is an internal error (ranks
// built from different sources).
Result<std::vector<std::vector<std::string>>> parse_unavailability(const std::vector<std::string>& all,
                                                                   size_t algorithms);

// Agrees on which algorithms run and creates them. `started`: when this
// rank started (bounds the set-up times other ranks report).
Result<std::vector<AlgoSlot>> set_up_algorithms(const RunPlan& plan, const CollectiveSetup& setup, Store& store,
                                                std::chrono::steady_clock::time_point started);

}  // namespace omnib
