#include "tools/allreduce/duration_run.h"

#include <chrono>
#include <string>

#include "tools/measure/duration_pacer.h"

namespace omnib {

Status DurationRun::run(std::vector<AlgoSlot>& slots, SizeRun& sr, int run, std::vector<DurationTally>& tallies,
                        const Checkpoint& checkpoint) {
  using Clock = std::chrono::steady_clock;
  const JobLayout& job = gather_.job;
  DurationPacer pacer(plan_.run_budget());
  const std::string prefix = sr.cfg + "/" + std::to_string(run);
  auto since = Clock::now();
  uint64_t timed = 0;
  for (uint64_t batch = 0;; ++batch) {
    auto rounds = agree_on_batch(gather_.store, prefix + "/pace/" + std::to_string(batch), job.rank, job.world(),
                                 job.rank == 0 ? pacer.propose() : 0);
    if (!rounds.is_ok()) return rounds.status();
    if (rounds.value() == 0) return Status::ok();
    for (uint64_t i = 0; i < rounds.value(); ++i) OMNIB_RETURN_IF_ERROR(rounds_.run(slots, sr, run, true, timed++));
    const auto now = Clock::now();
    const double seconds = std::chrono::duration<double>(now - since).count();
    since = now;
    auto by_algo = gather_samples(gather_, slots, resources_, prefix + "/batch/" + std::to_string(batch),
                                  static_cast<int>(rounds.value()), sr.config.count());
    if (!by_algo.is_ok()) return by_algo.status();
    if (job.rank != 0) continue;
    for (size_t a = 0; a < slots.size(); ++a)
      if (slots[a].collective) OMNIB_RETURN_IF_ERROR(tallies[a].fold(run, by_algo.value()[a], seconds));
    OMNIB_RETURN_IF_ERROR(checkpoint(sr, tallies));
  }
}

}  // namespace omnib
