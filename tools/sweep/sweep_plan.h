// The configurations a sweep runs: the cross product of its lists, each one
// an `omni-bench allreduce` invocation over every size and algorithm.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/status.h"

namespace omnib {

// The swept dimensions as given on the command line (comma lists).
struct SweepLists {
  std::vector<std::string> densities{"0.1"};
  std::vector<std::string> block_sizes{"256"};
  std::vector<std::string> nodes{"4"};
  // Dedicated aggregator counts; "nodes" means one per worker of the point.
  // Empty: colocated shards (allreduce's default).
  std::vector<std::string> aggregators;
  std::vector<std::string> overlaps{"random"};
  std::vector<std::string> workloads{"blocks"};
  std::vector<std::string> link_rates;  // empty: no emulated links
  std::vector<uint64_t> sizes;          // bytes
  std::vector<std::string> algos{"omni"};
};

// One point of the sweep: everything but the sizes and algorithms, which one
// allreduce invocation covers.
struct SweepPoint {
  std::string density;  // empty when the workload fixes it (presets, npy)
  std::string block_size;
  std::string nodes;
  std::string aggregators;  // a count; empty when not given
  std::string overlap;
  std::string workload;
  std::string workload_label;  // as results record it (e.g. "zipf:1.1" for "zipf")
  std::string link_rate;  // empty when not emulating
  std::vector<uint64_t> sizes;  // still to run (resume drops finished ones)

  // The allreduce arguments for this point (sizes as one -b/-e list run).
  std::vector<std::string> allreduce_args(const std::vector<std::string>& algos) const;
  std::string describe() const;
};

// Whether a workload fixes its own density (then the density list is not
// crossed with it).
bool workload_fixes_density(const std::string& workload);

// Usage error unless every item is a non-negative count or "nodes".
Status check_aggregator_list(const std::vector<std::string>& aggregators);

// The cross product, nodes outermost so ranks are relaunched as rarely as
// possible when the node count changes. `label` maps a --workload text to
// the name results record (identity when null).
std::vector<SweepPoint> expand_sweep(const SweepLists& lists,
                                     const std::function<std::string(const std::string&)>& label = nullptr);

// Drops from `points` every (point, size) whose records for all `algos` are
// already in `existing_results` (a results[] array), and points left empty.
// Returns how many (point, size) pairs were dropped.
size_t drop_finished(std::vector<SweepPoint>& points, const std::vector<std::string>& algos,
                     const nlohmann::json& existing_results);

// Parses a --sizes list ("1M,4M,64M") or -b/-e/-f into sizes.
Result<std::vector<uint64_t>> sweep_sizes(const std::string& list, const std::string& min_bytes,
                                          const std::string& max_bytes, double factor);

}  // namespace omnib
