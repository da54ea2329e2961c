// From every rank's per-call breakdowns to an algorithm's --profile summary:
// each traced call is charged to its slowest worker (the one whose time is
// the call's measured time), and the summary averages those workers' shares
// over the calls, weighted by time (docs/profiling.md).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/base/status.h"
#include "tools/record/result_record.h"
#include "tools/measure/call_breakdown.h"

namespace omnib {

// One traced timed call of one rank.
struct CallProfile {
  uint64_t iteration = 0;  // timed call index, as in samples_us
  CallBreakdown breakdown;
};

// `workers[r]` holds worker r's traced calls. nullopt when no call was
// traced on every worker (nothing to charge).
std::optional<ProfileSummary> summarize_profile(const std::vector<std::vector<CallProfile>>& workers,
                                                uint64_t dropped_events);

// A rank's call profiles as they travel through the store, and back: each
// [iteration, barrier, call, compute, send, wait, backend, other]. Reading
// checks that the parts are non-negative and add up to the call, and that
// iterations are below `timed_calls`.
nlohmann::json call_profiles_to_json(const std::vector<CallProfile>& calls);
Result<std::vector<CallProfile>> call_profiles_from_json(const nlohmann::json& j, uint64_t timed_calls);

}  // namespace omnib
