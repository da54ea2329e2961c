#include "tools/measure/duration_tally.h"

#include <algorithm>

namespace omnib {
namespace {

// Each run keeps its share of the samples, so that runs' medians stay exact
// as long as the record's percentiles are.
size_t kept_per_run(int repeat) { return std::max<size_t>(kKeptSamples / static_cast<size_t>(std::max(repeat, 1)), 64); }

void add_totals(const RankSamples& batch, RankSamples& total) {
  for (size_t k = 0; k < batch.cpu.size() && k < total.cpu.size(); ++k) total.cpu[k] += batch.cpu[k];
  if (batch.wire) {
    if (!total.wire) total.wire = ByteCounters{};
    *total.wire += *batch.wire;
  }
  if (batch.link_bytes) total.link_bytes = total.link_bytes.value_or(0) + *batch.link_bytes;
  if (batch.link_retransmits)
    total.link_retransmits = total.link_retransmits.value_or(0) + *batch.link_retransmits;
  total.calls_checked += batch.calls_checked;
  total.dropped_events += batch.dropped_events;
  for (const auto& [route, calls] : batch.routes) total.routes[route] += calls;
}

}  // namespace

DurationTally::DurationTally(const RecordFrame& frame, double requested_s)
    : frame_(frame),
      requested_s_(requested_s),
      all_(kKeptSamples),
      runs_(static_cast<size_t>(frame.repeat), TimeTally(kept_per_run(frame.repeat))) {}

Status DurationTally::fold(int run, const std::vector<RankSamples>& batch, double seconds) {
  if (run < 0 || run >= frame_.repeat) return internal_error("run " + std::to_string(run) + " is out of range");
  const size_t k = static_cast<size_t>(run);
  const size_t workers = std::min(batch.size(), static_cast<size_t>(frame_.nodes));
  const size_t calls = workers > 0 && k < batch[0].times_us.size() ? batch[0].times_us[k].size() : 0;
  for (size_t r = 0; r < workers; ++r)
    if (k >= batch[r].times_us.size() || batch[r].times_us[k].size() != calls)
      return internal_error("rank " + std::to_string(r) + " timed a different number of calls than rank 0 in a batch");
  // Call i took as long as its slowest worker.
  for (size_t i = 0; i < calls; ++i) {
    double slowest = 0;
    for (size_t r = 0; r < workers; ++r) slowest = std::max(slowest, batch[r].times_us[k][i]);
    all_.add(slowest);
    runs_[k].add(slowest);
  }
  if (totals_.size() < batch.size()) totals_.resize(batch.size(), RankSamples(frame_.repeat));
  for (size_t r = 0; r < batch.size(); ++r) add_totals(batch[r], totals_[r]);
  wrong_.add(tally_wrong(batch));
  elapsed_s_ += seconds;
  return Status::ok();
}

void DurationTally::fill(bool complete, ResultRecord& out) const {
  out.warmup = frame_.warmup;
  out.repeat = frame_.repeat;
  out.time_us = all_.stats();
  out.samples_us = all_.kept();
  out.runs.clear();
  std::vector<uint64_t> run_calls;
  for (const TimeTally& run : runs_) {
    if (run.count() == 0) break;  // runs not started yet (a checkpoint)
    out.runs.push_back(RunSummary{run.stats().median, 0, std::nullopt});
    run_calls.push_back(run.count());
  }
  out.iters = static_cast<int>(std::min<uint64_t>(all_.count() / std::max<size_t>(out.runs.size(), 1), INT32_MAX));
  combine_rank_counters(frame_, totals_, run_calls, wrong_, out);
  DurationOutcome d;
  d.requested_s = requested_s_;
  d.elapsed_s = elapsed_s_;
  d.timed_calls = all_.count();
  d.complete = complete;
  d.percentiles_exact = all_.exact();
  out.duration = d;
}

}  // namespace omnib
