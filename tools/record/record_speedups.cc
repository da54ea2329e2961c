#include "tools/record/record_speedups.h"

namespace omnib {

const ResultRecord* fastest_dense(const std::vector<ResultRecord>& group) {
  const ResultRecord* best = nullptr;
  for (const auto& r : group) {
    if (!r.dense || r.skipped || r.time_us.median <= 0) continue;
    if (!best || r.time_us.median < best->time_us.median) best = &r;
  }
  return best;
}

void compute_speedups(std::vector<ResultRecord>& group) {
  const ResultRecord* best = fastest_dense(group);
  for (auto& r : group) {
    r.speedup_vs.clear();
    r.vs_best_dense.reset();
    if (r.skipped || r.time_us.median <= 0) continue;
    for (const auto& other : group) {
      if (&other == &r || other.skipped || other.time_us.median <= 0) continue;
      r.speedup_vs[other.algo] = other.time_us.median / r.time_us.median;
    }
    if (best) r.vs_best_dense = BestDense{best->algo, best->time_us.median / r.time_us.median};
  }
}

}  // namespace omnib
