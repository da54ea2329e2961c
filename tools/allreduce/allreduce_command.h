// `omni-bench allreduce`: validates options, then either launches ranks
// locally or, when started by a launcher, runs as one rank.
#pragma once

#include <string>
#include <vector>

#include "tools/allreduce/allreduce_options.h"

namespace omnib {

int run_allreduce_command(const AllreduceOptions& options, const std::vector<std::string>& argv);

}  // namespace omnib
