// Plain result records: what the runner measured for one algorithm on one
// configuration. Reporters render them; nothing here prints.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/base/status.h"
#include "tools/config/run_config.h"
#include "engine/blocks/input_stats.h"
#include "tools/common/stats.h"
#include "tools/record/memory_floor.h"

namespace omnib {

// Version 2: the identity fields moved into "config" (RunConfig); every call
// is checked (wrong_calls); unchecked runs have "correct": null; runs of
// --repeat, frame counts and CPU time were added. Version 3: the --profile
// breakdown ("profile") and the emulated link's limit ("link_limit").
// Version 4: omni's batch encoding ("encoding" in the identity). Version 5:
// omni's route ("route" in the identity, "routes" per record). Version 6:
// how workers wait for their GPU ("gpu_sync" in the identity). Version 7:
// simulated records (`omni-bench simulate`: "simulated", net "simulate" and
// "topology" in the identity). Version 8: the emulated ranks' congestion
// control ("tcp_cc"); version 9: their slow start after idle
// ("tcp_idle_restart").
// docs/json-schema.md says how older files load.
constexpr int kSchemaVersion = 9;

// One whole run of interleaved rounds (--repeat makes several): what compare
// judges when it looks at the spread between runs.
struct RunSummary {
  double median_us = 0;        // median of the run's per-iteration times
  double cpu_us_per_call = 0;  // CPU time of all ranks per timed call
  std::optional<double> cpu_ns_per_wire_byte;
};

// CPU time (user + system, getrusage of each rank's process) per timed call.
struct CpuUsage {
  double user_us_per_call = 0;  // all ranks
  double sys_us_per_call = 0;   // all ranks
  double rank_max_us_per_call = 0;
  std::optional<double> ns_per_wire_byte;  // all ranks' CPU / all ranks' wire bytes
  // Per rank: how long its threads waited for a CPU (runnable, not running;
  // summed over threads, so it can pass 1) over the time the timed calls
  // took. Empty where the kernel does not report run delays.
  std::vector<double> wait_share_per_rank;
  std::optional<double> wait_share_max() const;
  // The most involuntary context switches (getrusage) of any rank per timed
  // call: all that is left of the CPU wait where schedstat is missing.
  std::optional<double> preemptions_per_call_max;
  // With --profile, on our own transports: the part of the CPU time the
  // transport took (engine/transport/transport_cpu.h), all ranks, per call
  // and per wire byte.
  std::optional<double> transport_us_per_call;
  std::optional<double> transport_ns_per_wire_byte;
};

// Past this share of a call spent waiting for a CPU, a row measured the host.
inline constexpr double kHostBoundWaitShare = 0.10;

// The fastest dense algorithm of a configuration's run, and how much faster
// a record is than it: the honest headline of a sparse algorithm.
struct BestDense {
  std::string algo;    // the fastest dense algorithm (possibly the record's own)
  double speedup = 0;  // its median time / this record's median time
};

// --profile: where the slowest worker's time went in the traced calls
// (docs/profiling.md, tools/measure/call_breakdown.h).
struct ProfileSummary {
  uint64_t calls = 0;      // traced timed calls
  double call_us = 0;      // mean call time of each call's slowest worker
  double barrier_us = 0;   // mean time that worker spent in the barrier before the call
  // Shares of that worker's barrier + call time; they add up to 1.
  double compute = 0;
  double send = 0;
  double wait = 0;
  double barrier = 0;
  double backend = 0;
  double other = 0;
  int slowest_rank = 0;         // the worker that was slowest most often
  uint64_t dropped_events = 0;  // all ranks: spans lost to full trace buffers
};

// The shares of a profile with their names, in the order reports show them.
std::vector<std::pair<const char*, double ProfileSummary::*>> profile_shares();

// --net emulate: how close the call came to what its busiest link allows.
struct LinkLimit {
  double limit_us = 0;  // the busiest rank's link bytes per call at the link rate
  double of_limit = 0;  // limit_us / median time: 1 = the link never idled
};

// --duration: how long the configuration's timed calls ran, and how exact
// its statistics are (docs/json-schema.md).
struct DurationOutcome {
  double requested_s = 0;          // the configuration's share of --duration (all its runs)
  double elapsed_s = 0;            // wall time of its timed calls, rank 0's clock
  uint64_t timed_calls = 0;        // all runs
  bool complete = true;            // false: a checkpoint of a configuration still running
  bool percentiles_exact = true;   // false: median, p95, p99 from a histogram (TimeTally)
};

struct ResultRecord {
  std::string algo;
  RunConfig config;
  // The algorithm sends every element whatever the data
  // (CollectiveInfo::exploits_sparsity false): a candidate for best dense.
  bool dense = false;

  // Outcome.
  bool skipped = false;
  std::string skip_reason;
  int iters = 0;
  int warmup = 0;
  int repeat = 1;
  TimeStats time_us;                // over every timed iteration of every run
  std::vector<double> samples_us;   // per-iteration times (max over ranks), run after run
  std::vector<RunSummary> runs;     // one per --repeat
  double algbw_GBps = 0;
  double busbw_GBps = 0;
  // Per iteration, over the timed calls; absent when the backend cannot count.
  std::optional<double> wire_sent_per_rank_max;
  std::optional<double> wire_sent_total;
  std::optional<double> wire_frames_per_rank_max;
  std::optional<double> wire_frames_total;
  std::string wire_note;  // why wire bytes are missing, if they are
  // Bytes the emulated links transmitted per iteration (--net emulate only).
  std::optional<double> link_sent_per_rank_max;
  std::optional<double> link_sent_total;
  // TCP segments all ranks retransmitted per iteration (--net emulate only):
  // packets the emulated links dropped, at switch ports under incast.
  std::optional<double> link_retransmits_per_call;
  double analytic_sent_per_rank_max = 0;
  double analytic_sent_total = 0;
  bool analytic_exact = false;  // counted from the inputs' non-zeros (else estimated from densities)
  InputStats inputs;
  bool checked = false;
  std::optional<bool> correct;  // null when unchecked: never "correct" by default
  uint64_t wrong_elements = 0;  // over every checked call and rank
  uint64_t wrong_calls = 0;     // calls in which some rank had a wrong element
  uint64_t calls_checked = 0;   // per rank: warm-up and timed calls of every run
  std::optional<uint64_t> first_wrong_call;  // 0-based, in run order, warm-ups included
  std::optional<CpuUsage> cpu;
  // Creating the algorithm's collective (its links set up), max over ranks;
  // once per run, so every configuration of a run carries the same figure.
  std::optional<double> setup_us;
  std::optional<LinkLimit> link_limit;   // --net emulate only
  // --profile on host tensors: the memory floor, and the least time a call
  // can take, max(link limit, floor), over the median time (like
  // of_limit: 1 = the call took no longer than its bound).
  std::optional<MemoryFloor> memory_floor;
  std::optional<double> of_bound;
  std::optional<ProfileSummary> profile;  // --profile only
  std::optional<DurationOutcome> duration;  // --duration only
  std::map<std::string, double> speedup_vs;  // other algo -> its time / this time
  std::map<std::string, uint64_t> routes;    // route -> timed calls that took it (omni: "shards", "direct")
  std::optional<BestDense> vs_best_dense;    // absent when no dense algorithm ran
  std::string note;
  // Simulated (omni-bench simulate), not measured: time_us is the
  // simulator's, and nothing was checked or counted on a wire.
  bool simulated = false;

  // False for a --duration checkpoint of a configuration that was still
  // running: its calls so far, not the measurement asked for.
  bool finished() const { return !duration || duration->complete; }
};

nlohmann::json to_json(const ResultRecord& r);

// Reads a record of a file with `schema_version` (1 to 4). Every field is
// type-checked (the error names it). Fields a schema 1 record lacks take
// their defaults and are appended to `defaulted`; a record written before
// "dense" existed takes it from the registry of this build (false for an
// algorithm it does not know), and "dense" is appended to `defaulted`.
Result<ResultRecord> record_from_json(const nlohmann::json& j, int schema_version,
                                      std::vector<std::string>* defaulted);


// Written once per run: how and where it ran.
struct RunContext {
  std::string command_line;
  nlohmann::json configuration;  // the plan as the run understood it
  nlohmann::json environment;    // versions, hosts, ranks, git revision
};

}  // namespace omnib
