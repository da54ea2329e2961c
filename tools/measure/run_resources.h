// The resources of one run as a rank sees them: each rank watches its own
// process from the first timed call of the size in progress on (each size
// starts afresh, so that the memory a larger size needs is not growth),
// counts its timed collective calls, and samples its holdings after a
// bounded, evenly spaced set of its timed rounds (resource_series.h);
// rank 0 also watches the local launcher (the process serving the store,
// read through /proc/<pid>) and keeps every rank's latest report of every
// size, from which it makes the run's "resources" block and its verdict
// (resources_report.h, resource_verdict.h).
// Not thread-safe: the rank's main thread calls it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/base/status.h"
#include "tools/measure/process_resources.h"
#include "tools/measure/resource_series.h"
#include "tools/measure/resource_verdict.h"
#include "tools/measure/resources_report.h"

namespace omnib {

class RunResources {
 public:
  // `launcher_pid`: the local launcher (0: none, the store is served by rank
  // 0 under an external launcher). `traced_rounds`: the first rounds of each
  // size whose spans --trace keeps in memory until the size ends
  // (kAllRoundsTraced: all; 0: no --trace).
  RunResources(int rank, int nodes, int launcher_pid, uint64_t traced_rounds = 0);

  // At the first timed call: takes the start samples (this process; on rank
  // 0 the launcher's too). Later calls do nothing until restart().
  Status start();
  // A new size of `size_bytes` begins: the next start() takes new start
  // samples, and calls, rounds and series count from there.
  void restart(uint64_t size_bytes);
  // One timed collective call made (counted from start()).
  void count_call() {
    if (self_.started()) ++calls_;
  }
  // After every timed round, in order: samples this process (and on rank 0
  // the launcher, while every rank is still in the size's calls and so
  // connected to its store) when the series wants the round.
  Status after_timed_round();
  // This rank's report for rank 0: its start sample, a fresh one, and its series.
  Result<ProcessResources> mine();
  // Rank 0: every rank's latest report (index = rank) of the size in
  // progress replaces the last ones.
  void update(std::vector<ProcessResources> ranks);
  // Rank 0: samples the launcher now. Call it only while every rank is
  // held in a collective of the store that waits for rank 0 (a barrier, an
  // all-gather): a rank that has left has closed its store connection, and
  // the launcher would seem to have lost a descriptor.
  void sample_launcher();
  // Rank 0: the block so far, with the launcher's latest sample (left out,
  // with a note saying why, when /proc/<pid> cannot be read).
  ResourcesReport report() const;

 private:
  // The size in progress as rank 0 has it: every rank's latest report and
  // the launcher's.
  SizeResources current() const;

  ResourceWatch self_;
  std::optional<ResourceWatch> launcher_;  // rank 0 under the local launcher
  uint64_t traced_rounds_;
  uint64_t calls_ = 0;
  uint64_t rounds_ = 0;
  ResourceSeries self_series_, launcher_series_;
  uint64_t size_bytes_ = 0;
  std::vector<SizeResources> done_;  // rank 0: the sizes measured before the one in progress
  std::vector<ProcessResources> ranks_;
  std::optional<ProcessResources> launcher_latest_;
  std::string launcher_problem_;  // why the launcher cannot be read, if it cannot
};

}  // namespace omnib
