// Link set-up time: how long each algorithm's collective took to be created
// (its links established, its lanes started), reported as the maximum over
// ranks, since a collective is ready only when every rank's links are.
#pragma once

#include <chrono>
#include <vector>

#include "engine/bootstrap/store.h"
#include "engine/status.h"

namespace omnib {

// Every rank calls it once, with its own times in microseconds, one per
// algorithm in the same order (0 for one it did not create). Rank 0 gets
// the maximum over ranks of each; the other ranks an empty list. Blocks on
// the store (its timeout bounds the wait). Rank 0 refuses (internal error
// naming the rank) a list of another length, or a time that is not finite,
// negative or longer than rank 0 has run since `run_started` (with the
// slack of tools/measure/peer_bounds.h): no rank's set-up can be longer.
Result<std::vector<double>> max_setup_us_over_ranks(Store& store, int rank, int world,
                                                    const std::vector<double>& mine,
                                                    std::chrono::steady_clock::time_point run_started);

}  // namespace omnib
