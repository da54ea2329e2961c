// What one rank of `omni-bench allreduce` does, as google/benchmark's runner
// does one benchmark: meet the other ranks (rank_rendezvous.h), agree on and
// set up the algorithms (algorithm_slots.h), and for each size make the
// inputs (rank_tensors.h), measure every algorithm interleaved, round by
// round (call_round.h; --duration: duration_run.h), and (rank 0) build the
// records (rank_records.h) and hand them to the reporters.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tools/allreduce/algorithm_slots.h"
#include "tools/allreduce/call_round.h"
#include "tools/allreduce/rank_records.h"
#include "tools/allreduce/rank_tensors.h"
#include "tools/allreduce/run_plan.h"
#include "tools/allreduce/threshold_check.h"
#include "tools/launch/launch_env.h"
#include "tools/launch/rank_rendezvous.h"
#include "tools/measure/duration_tally.h"
#include "tools/measure/run_resources.h"
#include "tools/net/link_meter.h"
#include "tools/report/reporter.h"
#include "tools/trace/trace_collector.h"
#include "tools/trace/trace_file.h"

namespace omnib {

class RankRun {
 public:
  // Rank 0 owns `reporters`. `process_env`: what start-up wrote into the
  // environment for the algorithms (start_up_env.h).
  RankRun(const RunPlan& plan, const LaunchEnv& launch, std::string command_line,
          std::vector<std::unique_ptr<Reporter>> reporters, std::vector<EnvChange> process_env);

  // The whole run; returns the process exit code (docs/exit-codes.md).
  int run();

 private:
  using Clock = std::chrono::steady_clock;

  Status rendezvous();
  Status set_up();
  // --profile, --trace: every rank at the same point, once the links are up.
  Status start_tracing();
  Status begin_reports();
  // Rank 0: the resources and the trace file, once every size is measured.
  Status finish_reports();
  // After the run, failed or not: every rank leaves the store together.
  Status leave(Status s);
  Status measure_all_sizes();
  Status measure_size(size_t k, const Workload& workload);
  // --profile on host tensors: the configuration's memory floor into floor_
  // (rank 0), before its inputs are made (tools/allreduce/rank_floor.h).
  Status measure_floor(const SizeRun& sr);
  // `tallies`: the configuration ran for --duration (else -n).
  Status report_size(const SizeRun& sr, std::vector<DurationTally>* tallies);
  // Rank 0, every --checkpoint-interval during --duration.
  Status checkpoint(const SizeRun& sr, const std::vector<DurationTally>& tallies);
  // Rank 0: the resources so far and `group` to every report, as a finished
  // configuration or as a checkpoint of the one in progress.
  Status publish(const std::vector<ResultRecord>& group, bool finished);
  SampleGather sample_gather() { return SampleGather{*met_.store, job_, plan_.repeat, started_}; }

  const RunPlan& plan_;
  const LaunchEnv& launch_;
  std::string command_line_;
  std::vector<std::unique_ptr<Reporter>> reporters_;
  std::vector<EnvChange> process_env_;
  JobLayout job_;
  RankRendezvous met_;
  std::vector<AlgoSlot> slots_;
  std::unique_ptr<DeviceTensors> device_tensors_;  // --device cuda
  std::unique_ptr<RankTensors> tensors_;
  std::unique_ptr<LinkMeter> link_meter_;  // --net emulate: this rank's link counter
  std::unique_ptr<LinkMeter> retransmit_meter_;  // --net emulate: its TCP's retransmitted segments
  std::optional<MemoryFloor> floor_;       // rank 0: the configuration's, when measure_floor made one
  bool any_wrong_ = false;
  ThresholdCheck thresholds_;
  TraceCollector tracer_;
  std::unique_ptr<TraceFile> trace_file_;           // rank 0, --trace
  std::unique_ptr<RunResources> resources_;         // made at rendezvous
  Clock::time_point last_checkpoint_;               // rank 0: when the reports were last written
  const Clock::time_point started_ = Clock::now();  // before the rendezvous: every rank's work comes after
};

// RankRun(...).run().
int run_allreduce_rank(const RunPlan& plan, const LaunchEnv& launch, const std::string& command_line,
                       std::vector<std::unique_ptr<Reporter>> reporters, std::vector<EnvChange> process_env);

}  // namespace omnib
