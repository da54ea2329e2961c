// `--net emulate`: runs the local launcher with every rank inside its own
// namespace of an emulated cluster, and removes the cluster however the run
// ends (success, failure, a dead rank, SIGINT/SIGTERM/SIGHUP). A SIGKILLed
// launcher cannot clean up; the next emulated run or `omni-bench net cleanup`
// removes what it left.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tools/launch/local_launcher.h"
#include "tools/config/link_shape.h"
#include "tools/net/net_plan.h"
#include "tools/net/rank_tcp.h"

namespace omnib {

// Returns the process exit code: the launch's, 6 when the cluster cannot be
// built (no privileges, no iproute2, a missing qdisc), 130 when interrupted.
int launch_emulated(LocalLaunchPlan plan, const LinkShape& shape, const RankTcp& tcp);

// The environment a rank of the emulated cluster gets: its link device (for
// the link meter) and the NCCL settings that keep NCCL on that link.
std::vector<std::pair<std::string, std::string>> emulated_rank_env(const NetPlan& plan, int rank);

}  // namespace omnib
