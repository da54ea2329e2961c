// The points a sweep runs: the cross product of its lists, each point one
// `omni-bench allreduce` invocation over every size and algorithm. Each
// point is planned with the same function allreduce uses (plan_allreduce),
// so the sweep knows the exact configurations (RunConfig) it will write:
// resuming compares them by key, never by re-parsing numbers.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "engine/base/status.h"
#include "tools/record/result_record.h"
#include "tools/allreduce/run_plan.h"

namespace omnib {

// The swept dimensions as given on the command line (comma lists).
struct SweepLists {
  std::vector<std::string> densities{"0.1"};
  std::vector<std::string> block_sizes{std::to_string(kDefaultBlockSize)};
  std::vector<std::string> nodes{"4"};
  // Dedicated aggregator counts; "nodes" means one per worker of the point.
  // Empty: colocated shards (allreduce's default).
  std::vector<std::string> aggregators;
  std::vector<std::string> overlaps{"random"};
  std::vector<std::string> workloads{"blocks"};
  std::vector<std::string> datatypes{"float"};
  std::vector<std::string> encodings;  // empty: allreduce's default
  std::vector<std::string> link_rates;  // non-empty: emulated links at each rate
  std::vector<std::string> algos{"omni"};
  bool emulate = false;  // --net emulate (implied by link rates)
  // Every point is `omni-bench simulate` (link rates then shape the
  // simulated links; the platform's options pass through).
  bool simulate = false;
  // How every point picks its sizes: allreduce's own size options.
  std::vector<std::string> size_args{"-b", "1M", "-e", "1M"};
  std::vector<std::string> passthrough;  // every other allreduce option, as given
};

// One point: its allreduce (or simulate) arguments and the plan they make.
struct SweepPoint {
  std::vector<std::string> args;  // the command and its arguments, sizes excluded
  std::string description;        // "nodes 4, density 0.1, block 256"
  RunPlan plan;                   // what allreduce will do with args and the sweep's sizes
  std::vector<uint64_t> todo;     // sizes still to run (resume drops finished ones)

  // The arguments of the child run: args, the sizes still to do, -J `json`.
  std::vector<std::string> allreduce_args(const std::string& json) const;
};

// Usage error unless every item is a non-negative count or "nodes".
Status check_aggregator_list(const std::vector<std::string>& aggregators);

// At most this many points in one sweep (each relaunches its ranks: 10000
// points take hours already); split a larger sweep into several -J files,
// which compare and plot read together.
inline constexpr uint64_t kMaxSweepPoints = 10000;

// The number of points the lists make (densities count once for workloads
// that fix their own), saturating at UINT64_MAX.
uint64_t count_sweep_points(const SweepLists& lists);
// Usage error naming the count and the lists when it is above
// kMaxSweepPoints; checked before any point is planned.
Status check_sweep_size(const SweepLists& lists);

// The cross product, nodes outermost so that ranks are relaunched as rarely
// as possible when the node count changes, each point planned. A point that
// allreduce would refuse is a usage error naming the point.
Result<std::vector<SweepPoint>> expand_sweep(const SweepLists& lists);

// The (algorithm, configuration) pairs `records` hold, as
// "algo|RunConfig::key_text()". A --duration checkpoint of a configuration
// that was still running (duration.complete false) is not finished.
std::set<std::string> finished_keys(const std::vector<ResultRecord>& records);

// Removes such unfinished records (their configurations run again, and the
// file should not hold both); returns how many.
size_t drop_unfinished(std::vector<ResultRecord>& records);

// Drops from every point the sizes whose records for all of the point's
// algorithms are in `finished`, and points left with none. Returns how many
// (point, size) pairs were dropped.
size_t drop_finished(std::vector<SweepPoint>& points, const std::set<std::string>& finished);

}  // namespace omnib
