#include "tools/measure/duration_pacer.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace omnib {

DurationPacer::DurationPacer(std::chrono::nanoseconds budget, Clock::time_point now) : budget_(budget), start_(now) {}

uint64_t DurationPacer::propose(Clock::time_point now) {
  const auto elapsed = std::chrono::duration<double>(now - start_).count();
  const double budget = std::chrono::duration<double>(budget_).count();
  uint64_t next = 1;
  if (rounds_ > 0) {
    if (elapsed >= budget) return 0;
    const double pace = elapsed / static_cast<double>(rounds_);  // seconds per round, batch overhead included
    const double left = std::ceil((budget - elapsed) / std::max(pace, 1e-9));
    const double per_batch = std::chrono::duration<double>(kMaxBatchTime).count() / std::max(pace, 1e-9);
    const double cap = std::min({static_cast<double>(kMaxBatchRounds), static_cast<double>(2 * last_batch_),
                                 std::max(per_batch, 1.0)});
    next = static_cast<uint64_t>(std::max(1.0, std::min(left, cap)));
  }
  rounds_ += next;
  last_batch_ = next;
  return next;
}

Result<uint64_t> agree_on_batch(Store& store, const std::string& name, int rank, int world, uint64_t proposal) {
  auto all = store_all_gather(store, name, rank, world, rank == 0 ? std::to_string(proposal) : "");
  if (!all.is_ok()) return all.status();
  const std::string& text = all.value().at(0);
  uint64_t rounds = 0;
  auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), rounds);
  if (err != std::errc() || end != text.data() + text.size() || rounds > DurationPacer::kMaxBatchRounds)
    return internal_error("rendezvous value 'gather/" + name + "/0' holds '" + text.substr(0, 40) +
                          "', not a batch of at most " + std::to_string(DurationPacer::kMaxBatchRounds) + " rounds");
  return rounds;
}

}  // namespace omnib
