// Context for a timing verdict: whether the host, not the network, set the
// time of the runs compared (a rank waited for a CPU past the share at which
// a result is flagged HOST-BOUND). A regression measured on a starved host
// says so, and so does one whose baseline was starved.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tools/record/result_record.h"

namespace omnib {

// The largest CPU-wait share of any of these runs; nullopt where none
// measured it (files from before the wait was measured, or no schedstat).
std::optional<double> worst_wait_share(const std::vector<const ResultRecord*>& runs);

// "host-bound now: a rank waited for a CPU 23% of its call (baseline 2%)",
// or empty when neither side passed kHostBoundWaitShare.
std::string host_bound_note(const std::vector<const ResultRecord*>& baseline,
                            const std::vector<const ResultRecord*>& current);

}  // namespace omnib
