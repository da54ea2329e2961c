// What one rank of `omni-bench allreduce` does: rendezvous, set up every
// requested algorithm, and for each size measure them interleaved on the same
// inputs (each call's output poisoned before and checked after), and (rank 0)
// hand the records to the reporters.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tools/run_plan.h"
#include "tools/launch_env.h"
#include "tools/report/reporter.h"

namespace omnib {

// Returns the process exit code (docs/exit-codes.md). Rank 0 owns `reporters`.
int run_allreduce_rank(const RunPlan& plan, const LaunchEnv& launch, const std::string& command_line,
                       std::vector<std::unique_ptr<Reporter>> reporters);

}  // namespace omnib
