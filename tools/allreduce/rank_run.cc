#include "tools/allreduce/rank_run.h"

#include <signal.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>

#include "engine/bootstrap/tcp_store.h"
#include "engine/transport/transport_cpu.h"
#include "tools/allreduce/duration_run.h"
#include "tools/allreduce/rank_floor.h"
#include "tools/measure/memory_bound.h"
#include "tools/report/table_reporter.h"
#include "tools/record/environment_info.h"

namespace omnib {
namespace {

using nlohmann::json;

// Past this, the wire models estimate from densities (a note in the record says so).
constexpr uint64_t kMaxInputSupportBytes = uint64_t{512} << 20;

int fail(int rank, const Status& s) {
  // A closed stdout (`| head`) on rank 0 ends every rank quietly.
  if (s.code() == Code::kOutputClosed || s.message().find(kOutputClosedNotice) != std::string::npos)
    return exit_code(Code::kOutputClosed);
  std::fprintf(stderr, "omni-bench: rank %d: %s\n", rank, s.message().c_str());
  return exit_code(s.code());
}

}  // namespace

RankRun::RankRun(const RunPlan& plan, const LaunchEnv& launch, std::string command_line,
                 std::vector<std::unique_ptr<Reporter>> reporters, std::vector<EnvChange> process_env)
    : plan_(plan),
      launch_(launch),
      command_line_(std::move(command_line)),
      reporters_(std::move(reporters)),
      process_env_(std::move(process_env)),
      thresholds_(plan.thresholds),
      tracer_(plan.trace) {
  // The transport's part of the CPU time, for --profile's net/B column.
  set_transport_cpu_accounting(plan.trace.profile);
}

int RankRun::run() {
  // Rank 0 writes the table: a reader that goes away is an EPIPE from the
  // write, which ends the job quietly, not a signal that kills this rank.
  signal(SIGPIPE, SIG_IGN);
  Status s = rendezvous();
  if (s.is_ok()) s = set_up();
  if (s.is_ok()) s = start_tracing();
  if (s.is_ok()) s = begin_reports();
  if (s.is_ok()) s = measure_all_sizes();
  if (s.is_ok()) s = finish_reports();
  s = leave(s);
  if (!s.is_ok()) return fail(job_.rank, s);
  // Rank 0 alone holds the results; wrong results outrank missed thresholds.
  if (trace_file_ && trace_file_->dropped_events() > 0)
    std::fprintf(stderr, "omni-bench: %s lacks %llu spans that full buffers dropped: raise --trace-buffer\n",
                 trace_file_->path().c_str(), static_cast<unsigned long long>(trace_file_->dropped_events()));
  const int threshold_code = job_.rank == 0 ? thresholds_.report(stdout) : 0;
  return any_wrong_ ? exit_code(Code::kWrongResult) : threshold_code;
}

Status RankRun::rendezvous() {
  job_.rank = launch_.rank;
  job_.aggregators = plan_.base.aggregators;
  job_.nodes = plan_.base.nodes;
  auto met = rendezvous_rank(launch_, plan_.timeout_s, plan_.transport);
  if (!met.is_ok()) return met.status();
  met_ = met.take();
  // --trace keeps the spans of each size's traced calls until the size ends.
  const uint64_t traced_rounds = plan_.trace.trace_path.empty() ? 0
                                 : plan_.trace.trace_iters == 0 ? kAllRoundsTraced
                                                                : static_cast<uint64_t>(plan_.trace.trace_iters);
  resources_ = std::make_unique<RunResources>(job_.rank, job_.nodes, launch_.launcher_pid, traced_rounds);
  return Status::ok();
}

Status RankRun::set_up() {
  CollectiveSetup setup = collective_setup(plan_, job_, met_, launch_);
  setup.process_env = process_env_;
  // Before the collectives are made: they bind to this thread's GPU.
  if (plan_.base.device == DeviceKind::kCuda && job_.is_worker()) {
    auto tensors = DeviceTensors::create(setup.local_index, plan_.sizes.back(), plan_.base.gpu_sync);
    if (!tensors.is_ok()) return tensors.status();
    device_tensors_ = tensors.take();
  }
  auto slots = set_up_algorithms(plan_, setup, *met_.store, started_);
  if (!slots.is_ok()) return slots.status();
  slots_ = slots.take();
  return Status::ok();
}

Status RankRun::start_tracing() {
  OMNIB_RETURN_IF_ERROR(tracer_.start(*met_.links, job_.rank, job_.world(), job_.is_worker(),
                                      met_.hosts[static_cast<size_t>(job_.rank)]));
  if (job_.rank == 0 && !plan_.trace.trace_path.empty())
    trace_file_ = std::make_unique<TraceFile>(
        plan_.trace.trace_path, json{{"command_line", command_line_}, {"configuration", plan_.describe()}});
  return Status::ok();
}

Status RankRun::begin_reports() {
  if (job_.rank != 0) return Status::ok();
  RunContext ctx;
  ctx.command_line = command_line_;
  ctx.configuration = plan_.describe();
  ctx.environment = build_environment();
  ctx.environment["hosts"] = met_.hosts;
  ctx.environment["ranks"] = job_.world();
  ctx.environment["nodes"] = job_.nodes;
  ctx.environment["aggregators"] = job_.aggregators;
  ctx.environment["launcher"] = launch_.launcher;
  ctx.environment["rendezvous"] = rendezvous_mode(launch_);
  ctx.environment["barrier_latency_us"] = met_.barrier_latency_us;
  ctx.environment["transport"] = met_.links->describe();
  for (auto& r : reporters_) OMNIB_RETURN_IF_ERROR(r->begin(ctx));
  last_checkpoint_ = Clock::now();
  return Status::ok();
}

Status RankRun::finish_reports() {
  if (job_.rank != 0) return Status::ok();
  const ResourcesReport resources = resources_->report();
  for (auto& r : reporters_) {
    r->set_resources(resources);
    OMNIB_RETURN_IF_ERROR(r->finish());
  }
  return trace_file_ ? trace_file_->finish() : Status::ok();
}

Status RankRun::leave(Status s) {
  // Rank 0 may serve the store: it leaves only after every rank is done with it.
  if (s.is_ok() && met_.store) s = store_gather_to_root(*met_.store, "finished", job_.rank, job_.world(), "").status();
  // Peers waiting in the store stop at once instead of after -T.
  if (!s.is_ok() && met_.store) (void)met_.store->post_abort(job_.rank, s.message());
  // Tear down links before the store goes away.
  slots_.clear();
  met_.links.reset();
  return s;
}

Status RankRun::measure_all_sizes() {
  auto workload = make_workload(plan_.workload);
  if (!workload.is_ok()) return workload.status();
  tensors_ = std::make_unique<RankTensors>(job_.rank, job_.nodes, job_.is_worker(), plan_.base.inplace,
                                           plan_.sizes.back(), device_tensors_.get());
  if (plan_.emulate) {
    auto meter = LinkMeter::for_this_rank(slots_.size());
    if (!meter.is_ok()) return meter.status();
    link_meter_ = meter.take();
    auto retransmits = LinkMeter::retransmits_of_this_rank(slots_.size());
    if (!retransmits.is_ok()) return retransmits.status();
    retransmit_meter_ = retransmits.take();
  }
  for (size_t k = 0; k < plan_.sizes.size(); ++k) OMNIB_RETURN_IF_ERROR(measure_size(k, *workload.value()));
  return Status::ok();
}

Status RankRun::measure_size(size_t k, const Workload& workload) {
  SizeRun sr;
  sr.cfg = "cfg" + std::to_string(k);
  sr.config = plan_.config(k);
  sr.workload = &workload;
  OMNIB_RETURN_IF_ERROR(measure_floor(sr));
  // Rank 0 writes the records: it keeps every rank's non-zeros for the exact
  // wire models, unless that would take too much memory.
  const bool keep_support =
      job_.rank == 0 && InputSupport::memory_bytes(job_.nodes, sr.config.count()) <= kMaxInputSupportBytes;
  auto tensors =
      tensors_->prepare(sr.config.count(), plan_.base.dtype, plan_.base.block_size, workload, keep_support, sr.stats);
  if (!tensors.is_ok()) return tensors.status();
  sr.t = &tensors.value();
  for (auto& s : slots_) s.samples = RankSamples(plan_.repeat);
  if (link_meter_) link_meter_->reset();
  if (retransmit_meter_) retransmit_meter_->reset();
  resources_->restart(sr.config.size_bytes);
  CallRound rounds(
      {plan_, job_, *met_.store, *tensors_, tracer_, link_meter_.get(), retransmit_meter_.get(), *resources_});
  DurationRun duration(plan_, rounds, sample_gather(), *resources_);
  std::vector<DurationTally> tallies;  // --duration
  if (plan_.duration) {
    const double share_s = std::chrono::duration<double>(plan_.run_budget()).count() * plan_.repeat;
    for (const auto& s : slots_) tallies.emplace_back(record_frame(s, sr.config, plan_, job_.nodes), share_s);
  }
  auto checkpoint = [this](const SizeRun& at, const std::vector<DurationTally>& t) { return this->checkpoint(at, t); };
  for (int run = 0; run < plan_.repeat; ++run) {
    sr.round = 0;
    for (int w = 0; w < plan_.warmup; ++w) OMNIB_RETURN_IF_ERROR(rounds.run(slots_, sr, run, false, 0));
    if (plan_.duration) {
      OMNIB_RETURN_IF_ERROR(duration.run(slots_, sr, run, tallies, checkpoint));
      continue;
    }
    for (int i = 0; i < plan_.iters; ++i)
      OMNIB_RETURN_IF_ERROR(rounds.run(slots_, sr, run, true, static_cast<uint64_t>(run) * plan_.iters + i));
  }
  if (link_meter_) {
    OMNIB_RETURN_IF_ERROR(store_barrier(*met_.store, sr.cfg + "/links", job_.world()));
    OMNIB_RETURN_IF_ERROR(link_meter_->switch_to(std::nullopt));
    OMNIB_RETURN_IF_ERROR(retransmit_meter_->switch_to(std::nullopt));
    for (size_t a = 0; a < slots_.size(); ++a) {
      slots_[a].samples.link_bytes = link_meter_->sent(a);
      slots_[a].samples.link_retransmits = retransmit_meter_->sent(a);
    }
  }
  if (!plan_.trace.trace_path.empty())
    OMNIB_RETURN_IF_ERROR(collect_configuration_trace(*met_.store, sr.cfg + "/trace", job_.rank, job_.world(), tracer_,
                                                      trace_file_.get()));
  return report_size(sr, plan_.duration ? &tallies : nullptr);
}

Status RankRun::measure_floor(const SizeRun& sr) {
  floor_.reset();
  // A device tensor's passes are bound by the GPU's memory, not the host's.
  if (!plan_.trace.profile || plan_.base.device != DeviceKind::kCpu) return Status::ok();
  const RankTensors::HostBuffers buffers = tensors_->host_buffers();
  auto floor = measure_memory_floor(FloorRun{*met_.store, job_, met_.hosts, command_line_, plan_.base.inplace}, sr.cfg,
                                    sr.config.size_bytes, static_cast<int>(dtype_size(sr.config.dtype)),
                                    buffers.input, buffers.output);
  if (!floor.is_ok()) return floor.status();
  floor_ = floor.take();
  return Status::ok();
}

Status RankRun::report_size(const SizeRun& sr, std::vector<DurationTally>* tallies) {
  // Rank 0 samples the launcher while the others wait in the barrier: past
  // it, a rank may finish and close its store connection.
  if (job_.rank == 0) resources_->sample_launcher();
  OMNIB_RETURN_IF_ERROR(store_barrier(*met_.store, sr.cfg + "/resources", job_.world()));
  // --duration: what is left since the last batch (link bytes, checks).
  auto by_algo = gather_samples(sample_gather(), slots_, *resources_, sr.cfg + "/results", tallies ? 0 : plan_.iters,
                                sr.config.count());
  if (!by_algo.is_ok()) return by_algo.status();
  if (job_.rank != 0) return Status::ok();
  for (size_t a = 0; tallies && a < slots_.size(); ++a)
    if (slots_[a].collective) OMNIB_RETURN_IF_ERROR((*tallies)[a].fold(plan_.repeat - 1, by_algo.value()[a], 0));
  auto group = build_records(slots_, job_, sr.config, sr.stats, tensors_->support(), [&](size_t a, ResultRecord& r) {
    if (tallies)
      (*tallies)[a].fill(true, r);
    else
      combine_rank_samples(record_frame(slots_[a], sr.config, plan_, job_.nodes), by_algo.value()[a], r);
  });
  if (floor_) {
    for (auto& r : group) set_memory_bound(*floor_, r);
    drop_beaten_floor(*floor_, group);
  }
  for (const auto& r : group)
    if (r.correct == false) any_wrong_ = true;
  thresholds_.add_group(group);
  return publish(group, true);
}

Status RankRun::checkpoint(const SizeRun& sr, const std::vector<DurationTally>& tallies) {
  if (Clock::now() - last_checkpoint_ < plan_.checkpoint_interval) return Status::ok();
  // Every other rank waits for rank 0 in the next batch's agreement, so all
  // are still connected to the launcher's store.
  auto group = build_records(slots_, job_, sr.config, sr.stats, tensors_->support(),
                             [&](size_t a, ResultRecord& r) { tallies[a].fill(false, r); });
  resources_->sample_launcher();
  return publish(group, false);
}

Status RankRun::publish(const std::vector<ResultRecord>& group, bool finished) {
  const ResourcesReport resources = resources_->report();
  for (auto& rep : reporters_) {
    rep->set_resources(resources);
    OMNIB_RETURN_IF_ERROR(finished ? rep->add_group(group) : rep->checkpoint(group));
  }
  last_checkpoint_ = Clock::now();
  return Status::ok();
}

int run_allreduce_rank(const RunPlan& plan, const LaunchEnv& launch, const std::string& command_line,
                       std::vector<std::unique_ptr<Reporter>> reporters, std::vector<EnvChange> process_env) {
  RankRun run(plan, launch, command_line, std::move(reporters), std::move(process_env));
  return run.run();
}

}  // namespace omnib
