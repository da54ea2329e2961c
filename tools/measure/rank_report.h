// What each rank sends rank 0 through the rendezvous store after a batch of
// calls (--duration) or a configuration: its samples of every algorithm and
// its resources. Rank 0 validates what it reads like any input from outside
// (an error names the store key and the field).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/status.h"
#include "tools/measure/peer_bounds.h"
#include "tools/measure/process_resources.h"
#include "tools/measure/rank_samples.h"

namespace omnib {

struct RankReport {
  std::vector<RankSamples> algos;  // in the run's algorithm order
  ProcessResources resources;
};

nlohmann::json to_json(const RankReport& report);

// Every rank's report, as store_gather_to_root returned them (index = rank)
// from the gather named `name`. `algos` names the algorithms in order; every
// worker's samples hold `runs` runs of `iters` times each (or none), and
// every number is within `bounds` (tools/measure/peer_bounds.h). An internal
// error names the rank whose report is malformed or impossible.
Result<std::vector<RankReport>> parse_rank_reports(const std::vector<std::string>& all, const std::string& name,
                                                   const std::vector<std::string>& algos, int runs, int iters,
                                                   const PeerBounds& bounds);

// The same reports regrouped: [algorithm][rank].
std::vector<std::vector<RankSamples>> samples_by_algorithm(std::vector<RankReport>& reports);

}  // namespace omnib
