// The resources of one run as a rank sees them: each rank watches its own
// process from the first timed call of the size in progress on (each size
// starts afresh, so that the memory a larger size needs is not growth) and
// counts its collective calls;
// rank 0 also watches the local launcher (the process serving the store,
// read through /proc/<pid>) and keeps every rank's latest report, from which
// it makes the run's "resources" block (resources_report.h).
// Not thread-safe: the rank's main thread calls it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/base/status.h"
#include "tools/measure/process_resources.h"
#include "tools/measure/resources_report.h"

namespace omnib {

class RunResources {
 public:
  // `launcher_pid`: the local launcher (0: none, the store is served by rank
  // 0 under an external launcher).
  RunResources(int rank, int nodes, int launcher_pid);

  // At the first timed call: takes the start samples (this process; on rank
  // 0 the launcher's too). Later calls do nothing until restart().
  Status start();
  // A new size begins: the next start() takes new start samples, and calls
  // count from there.
  void restart();
  // One collective call made (counted from start()).
  void count_call() {
    if (self_.started()) ++calls_;
  }
  // This rank's report for rank 0: its start sample and a fresh one.
  Result<ProcessResources> mine();
  // Rank 0: every rank's latest report (index = rank) replaces the last ones.
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
  ResourceWatch self_;
  std::optional<ResourceWatch> launcher_;  // rank 0 under the local launcher
  uint64_t calls_ = 0;
  std::vector<ProcessResources> ranks_;
  std::optional<ProcessResources> launcher_latest_;
  std::string launcher_problem_;  // why the launcher cannot be read, if it cannot
};

}  // namespace omnib
