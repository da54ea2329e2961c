// What one rank measured of one algorithm on one configuration, and how rank
// 0 turns every rank's measurements into the algorithm's result record. The
// samples travel through the rendezvous store as JSON, so rank 0 validates
// them like any other input from outside (an error names the field).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/base/status.h"
#include "engine/transport/connection.h"
#include "tools/measure/cpu_time.h"
#include "tools/record/result_record.h"
#include "tools/measure/profile_summary.h"

namespace omnib {

struct RankSamples {
  std::vector<std::vector<double>> times_us;  // [run][timed iteration]: this rank's call times
  std::vector<CpuTime> cpu;                   // [run]: CPU over the run's timed calls
  std::map<uint64_t, uint64_t> wrong;         // call index (run order, warm-ups included) -> wrong elements
  uint64_t calls_checked = 0;
  std::optional<ByteCounters> wire;    // over every timed call; nullopt when the backend cannot count
  std::optional<uint64_t> link_bytes;  // emulated link bytes over the timed calls
  std::optional<uint64_t> link_retransmits;  // emulated: TCP segments retransmitted over the timed calls
  std::vector<CallProfile> profile;    // --profile: the traced timed calls
  uint64_t dropped_events = 0;         // --profile, --trace: spans lost to full buffers
  std::map<std::string, uint64_t> routes;  // timed calls per route (Collective::last_route)

  // Starts empty samples for `runs` runs.
  explicit RankSamples(int runs = 0) : times_us(static_cast<size_t>(runs)), cpu(static_cast<size_t>(runs)) {}

  nlohmann::json to_json() const;
  // Checks shape (`runs` runs of `iters` times each) and types.
  static Result<RankSamples> from_json(const nlohmann::json& j, int runs, int iters);
};

// How one algorithm ran, for the record: everything but the samples.
struct RecordFrame {
  std::string algo;
  RunConfig config;
  int iters = 0;
  int warmup = 0;
  int repeat = 1;
  bool checked = true;
  int nodes = 1;  // ranks [0, nodes) are workers: only their times count
};

// Combines every rank's samples (index = rank) into the record's outcome:
// per-iteration time is the slowest worker's, wire bytes and CPU are summed
// and maximised over ranks, wrong calls are the union over ranks; the
// profile charges each traced call to its slowest worker; an emulated run
// gets its link limit.
void combine_rank_samples(const RecordFrame& frame, const std::vector<RankSamples>& ranks, ResultRecord& out);

// Wrong calls of some ranks' samples: a call counts once however many ranks
// got it wrong. Tallies of disjoint calls (batches of a --duration run) add up.
struct WrongTally {
  uint64_t calls = 0;
  uint64_t elements = 0;
  std::optional<uint64_t> first;  // the first wrong call, in run order
  void add(const WrongTally& other);
};
WrongTally tally_wrong(const std::vector<RankSamples>& ranks);

// The part of combine_rank_samples that does not need the per-call times:
// wire and link bytes and CPU per timed call (`run_calls[k]`: the timed calls
// of run k; per-rank totals in `ranks`), correctness from `wrong`, the link
// limit (from out.time_us.median) and the profile. `out.runs` must already
// hold one entry per run; their CPU fields are filled.
void combine_rank_counters(const RecordFrame& frame, const std::vector<RankSamples>& ranks,
                           const std::vector<uint64_t>& run_calls, const WrongTally& wrong, ResultRecord& out);

}  // namespace omnib
