#include "tools/allreduce_runner.h"

#include <signal.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <optional>

#include <nlohmann/json.hpp>

#include "engine/bootstrap/tcp_store.h"
#include "engine/collective.h"
#include "engine/transport/link_factory.h"
#include "tools/config/json_fields.h"
#include "tools/device_tensors.h"
#include "tools/environment_info.h"
#include "tools/input_reference.h"
#include "tools/measure/call_check.h"
#include "tools/measure/cpu_time.h"
#include "tools/measure/duration_pacer.h"
#include "tools/measure/duration_tally.h"
#include "tools/measure/rank_report.h"
#include "tools/measure/rank_samples.h"
#include "tools/measure/run_resources.h"
#include "tools/measure/setup_time.h"
#include "tools/net/link_meter.h"
#include "tools/rank_rendezvous.h"
#include "tools/report/table_reporter.h"
#include "tools/threshold_check.h"
#include "tools/trace/trace_collector.h"
#include "tools/trace/trace_file.h"

namespace omnib {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// Past this, the wire models estimate from densities (a note in the record says so).
constexpr uint64_t kMaxInputSupportBytes = uint64_t{512} << 20;

struct AlgoSlot {
  const CollectiveInfo* info = nullptr;
  std::unique_ptr<Collective> collective;
  std::string skip_reason;  // non-empty: not run
  double setup_us = 0;      // creating the collective: this rank's, then (rank 0) the max over ranks
  RankSamples samples;      // this rank's measurements of the configuration in progress
};

int fail(int rank, const Status& s) {
  // A closed stdout (`| head`) on rank 0 ends every rank quietly.
  if (s.code() == Code::kOutputClosed || s.message().find(kOutputClosedNotice) != std::string::npos)
    return exit_code(Code::kOutputClosed);
  std::fprintf(stderr, "omni-bench: rank %d: %s\n", rank, s.message().c_str());
  return exit_code(s.code());
}

// Host buffers of the largest size, reused for every size.
struct Buffers {
  std::vector<uint8_t> input, output, reference, scratch;
  explicit Buffers(size_t bytes) : input(bytes), output(bytes), reference(bytes), scratch(bytes) {}
};

TensorView view_of(std::vector<uint8_t>& buf, size_t count, DType dtype) {
  return TensorView{buf.data(), count, dtype, DeviceKind::kCpu};
}

// A worker's tensors for one configuration: the views the collectives get
// (host or device) and the host views the check uses.
struct Tensors {
  TensorView in, out;            // what the collectives see
  TensorView host_in, host_out;  // host copies (the same as in/out on the host path)
  TensorView reference;
};

class RankRun {
 public:
  RankRun(const RunPlan& plan, const LaunchEnv& launch, std::string command_line,
          std::vector<std::unique_ptr<Reporter>> reporters)
      : plan_(plan), launch_(launch), command_line_(std::move(command_line)), reporters_(std::move(reporters)) {}

  int run() {
    // Rank 0 writes the table: a reader that goes away is an EPIPE from the
    // write, which ends the job quietly, not a signal that kills this rank.
    signal(SIGPIPE, SIG_IGN);
    Status s = rendezvous();
    if (s.is_ok()) s = set_up_algorithms();
    if (s.is_ok()) s = start_tracing();
    if (s.is_ok()) s = begin_reports();
    if (s.is_ok()) s = measure_all_sizes();
    if (s.is_ok() && job_.rank == 0) {
      const ResourcesReport resources = resources_->report();
      for (auto& r : reporters_) {
        r->set_resources(resources);
        if (s.is_ok()) s = r->finish();
      }
      if (s.is_ok() && trace_file_) s = trace_file_->finish();
    }
    // Rank 0 may serve the store: it leaves only after every rank is done with it.
    if (s.is_ok() && store_) s = store_gather_to_root(*store_, "finished", job_.rank, job_.world(), "").status();
    // Peers waiting in the store stop at once instead of after -T.
    if (!s.is_ok() && store_) (void)store_->post_abort(job_.rank, s.message());
    // Tear down links before the store goes away.
    slots_.clear();
    links_.reset();
    if (!s.is_ok()) return fail(job_.rank, s);
    // Rank 0 alone holds the results; wrong results outrank missed thresholds.
    if (trace_file_ && trace_file_->dropped_events() > 0)
      std::fprintf(stderr, "omni-bench: %s lacks %llu spans that full buffers dropped: raise --trace-buffer\n",
                   trace_file_->path().c_str(), static_cast<unsigned long long>(trace_file_->dropped_events()));
    const int threshold_code = job_.rank == 0 ? thresholds_.report(stdout) : 0;
    return any_wrong_ ? exit_code(Code::kWrongResult) : threshold_code;
  }

 private:
  Status rendezvous() {
    job_.rank = launch_.rank;
    job_.aggregators = plan_.base.aggregators;
    job_.nodes = plan_.base.nodes;
    auto met = rendezvous_rank(launch_, plan_.timeout_s, plan_.transport);
    if (!met.is_ok()) return met.status();
    store_server_ = std::move(met.value().server);
    store_ = std::move(met.value().store);
    job_id_ = met.value().job_id;
    hosts_ = std::move(met.value().hosts);
    links_ = std::move(met.value().links);
    barrier_latency_us_ = met.value().barrier_latency_us;
    resources_ = std::make_unique<RunResources>(job_.rank, job_.nodes, launch_.launcher_pid);
    return Status::ok();
  }

  Status set_up_algorithms() {
    CollectiveSetup setup;
    setup.job = job_;
    setup.block_size = plan_.base.block_size;
    setup.dtype = plan_.base.dtype;
    setup.device = plan_.base.device;
    setup.timeout = plan_.timeout();
    setup.links = links_.get();
    setup.transport = plan_.transport;
    setup.bind_host = launch_.bind_host;
    setup.store = store_.get();
    setup.job_id = job_id_;
    setup.link_rate_bps = plan_.base.link_rate_bps;  // 0 unless the links are emulated
    parse_shard_layout(plan_.base.shard_layout, &setup.shard_layout);
    parse_encoding_policy(plan_.base.encoding, &setup.encoding);
    parse_route_policy(plan_.base.route, &setup.route);
    for (int r = 0; r < job_.nodes; ++r) {
      if (hosts_[static_cast<size_t>(r)] != hosts_[static_cast<size_t>(job_.rank)]) continue;
      if (r < job_.rank) ++setup.local_index;
      if (r != job_.rank) ++setup.local_workers;
    }
    // Before the collectives are made: they bind to this thread's GPU.
    if (plan_.base.device == DeviceKind::kCuda && job_.is_worker()) {
      auto tensors = DeviceTensors::create(setup.local_index, plan_.sizes.back());
      if (!tensors.is_ok()) return tensors.status();
      device_tensors_ = tensors.take();
    }
    // A backend every rank cannot run is skipped everywhere, so ranks agree.
    json mine = json::array();
    for (const auto& name : plan_.algos) {
      const CollectiveInfo* info = CollectiveRegistry::instance().find(name);
      auto reason = info->unavailable_reason(setup);
      if (!reason && plan_.base.device == DeviceKind::kCuda && !info->device_tensors)
        reason = "runs on host tensors only: compare it with --device cpu";
      mine.push_back(reason ? *reason : "");
    }
    auto all = store_all_gather(*store_, "availability", job_.rank, job_.world(), mine.dump());
    if (!all.is_ok()) return all.status();
    auto reasons = parse_availability(all.value());
    if (!reasons.is_ok()) return reasons.status();
    for (size_t i = 0; i < plan_.algos.size(); ++i) {
      AlgoSlot slot;
      slot.info = CollectiveRegistry::instance().find(plan_.algos[i]);
      for (int r = 0; r < job_.world() && slot.skip_reason.empty(); ++r) {
        const std::string& reason = reasons.value()[static_cast<size_t>(r)][i];
        if (!reason.empty()) slot.skip_reason = reason + (r == job_.rank ? "" : " (on rank " + std::to_string(r) + ")");
      }
      if (slot.skip_reason.empty()) {
        const auto t0 = Clock::now();
        auto c = slot.info->create(setup);
        if (!c.is_ok()) return c.status().with_context(plan_.algos[i] + ": ");
        slot.collective = c.take();
        slot.setup_us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
      }
      slots_.push_back(std::move(slot));
    }
    std::vector<double> setup_us;
    for (const auto& s : slots_) setup_us.push_back(s.setup_us);
    auto max_setup_us = max_setup_us_over_ranks(*store_, job_.rank, job_.world(), setup_us, started_);
    if (!max_setup_us.is_ok()) return max_setup_us.status();
    for (size_t a = 0; a < max_setup_us.value().size(); ++a) slots_[a].setup_us = max_setup_us.value()[a];
    bool any_runs = false;
    for (const auto& s : slots_) any_runs |= s.collective != nullptr;
    if (!any_runs) {
      std::string why;
      for (const auto& s : slots_) why += "\n  " + s.info->name + ": " + s.skip_reason;
      return unavailable_error("none of the requested algorithms can run here:" + why);
    }
    return Status::ok();
  }

  // Every rank's list of skip reasons, one per algorithm, checked before use.
  Result<std::vector<std::vector<std::string>>> parse_availability(const std::vector<std::string>& all) const {
    std::vector<std::vector<std::string>> out;
    for (size_t r = 0; r < all.size(); ++r) {
      const std::string key = "gather/availability/" + std::to_string(r);
      json j = parse_untrusted_json(all[r]);
      if (!j.is_array() || j.size() != plan_.algos.size())
        return internal_error("rendezvous value '" + key + "' is not a list of " +
                              std::to_string(plan_.algos.size()) + " strings (ranks built from different sources?)");
      std::vector<std::string> reasons;
      for (const auto& v : j) {
        if (!v.is_string()) return internal_error("rendezvous value '" + key + "' holds a non-string");
        reasons.push_back(v.get<std::string>());
      }
      out.push_back(std::move(reasons));
    }
    return out;
  }

  // --profile, --trace: every rank at the same point, once the links are up.
  Status start_tracing() {
    OMNIB_RETURN_IF_ERROR(
        tracer_.start(*links_, job_.rank, job_.world(), job_.is_worker(), hosts_[static_cast<size_t>(job_.rank)]));
    if (job_.rank == 0 && !plan_.trace.trace_path.empty())
      trace_file_ = std::make_unique<TraceFile>(
          plan_.trace.trace_path, json{{"command_line", command_line_}, {"configuration", plan_.describe()}});
    return Status::ok();
  }

  Status begin_reports() {
    if (job_.rank != 0) return Status::ok();
    RunContext ctx;
    ctx.command_line = command_line_;
    ctx.configuration = plan_.describe();
    ctx.environment = build_environment();
    ctx.environment["hosts"] = hosts_;
    ctx.environment["ranks"] = job_.world();
    ctx.environment["nodes"] = job_.nodes;
    ctx.environment["aggregators"] = job_.aggregators;
    ctx.environment["launcher"] = launch_.launcher;
    ctx.environment["rendezvous"] = rendezvous_mode(launch_);
    ctx.environment["barrier_latency_us"] = barrier_latency_us_;
    ctx.environment["transport"] = links_->describe();
    for (auto& r : reporters_) OMNIB_RETURN_IF_ERROR(r->begin(ctx));
    last_checkpoint_ = Clock::now();
    return Status::ok();
  }

  Status measure_all_sizes() {
    auto workload = make_workload(plan_.workload);
    if (!workload.is_ok()) return workload.status();
    if (job_.is_worker()) buffers_ = std::make_unique<Buffers>(plan_.sizes.back());
    if (plan_.emulate) {
      auto meter = LinkMeter::for_this_rank(slots_.size());
      if (!meter.is_ok()) return meter.status();
      link_meter_ = meter.take();
    }
    for (size_t k = 0; k < plan_.sizes.size(); ++k) OMNIB_RETURN_IF_ERROR(measure_size(k, *workload.value()));
    return Status::ok();
  }

  // This rank's tensors of `count` elements, inputs made and the reference summed.
  Result<Tensors> prepare(size_t count, const Workload& workload, InputStats& stats) {
    const DType dtype = plan_.base.dtype;
    Tensors t;
    if (!job_.is_worker()) {
      // Dedicated aggregators hold no tensor, only its shape.
      t.in = t.out = TensorView{nullptr, count, dtype, DeviceKind::kCpu};
      return t;
    }
    t.host_in = view_of(buffers_->input, count, dtype);
    t.host_out = plan_.base.inplace ? t.host_in : view_of(buffers_->output, count, dtype);
    t.reference = view_of(buffers_->reference, count, dtype);
    // Rank 0 writes the records: it keeps every rank's non-zeros for the
    // exact wire models, unless that would take too much memory.
    const bool keep_support =
        job_.rank == 0 && InputSupport::memory_bytes(job_.nodes, count) <= kMaxInputSupportBytes;
    PreparedInputs prepared = prepare_inputs(workload, job_.rank, job_.nodes, plan_.base.block_size, t.host_in,
                                             t.reference, view_of(buffers_->scratch, count, dtype), keep_support);
    stats = prepared.stats;
    support_ = std::move(prepared.support);
    t.in = t.host_in;
    t.out = t.host_out;
    if (device_tensors_) {
      // Inputs are made and checked on the host; the collectives see GPU copies.
      t.in = device_tensors_->input(count, dtype);
      t.out = plan_.base.inplace ? t.in : device_tensors_->output(count, dtype);
    }
    return t;
  }

  // Outside the timed region, before every call: in place, the input is
  // made again (the last call left a sum in it); out of place, the output
  // is poisoned, so that a call which writes nothing cannot inherit a
  // correct answer from an earlier call or another algorithm.
  Status before_call(const Tensors& t, const Workload& workload) {
    if (!job_.is_worker()) return Status::ok();
    if (plan_.base.inplace) {
      workload.fill(job_.rank, t.host_in);
      return device_tensors_ ? device_tensors_->upload(t.host_in) : Status::ok();
    }
    if (device_tensors_) return device_tensors_->fill(t.out, poison_byte(t.out.dtype));
    poison(t.out);
    return Status::ok();
  }

  // After every call: the output against the reference, bit for bit.
  Status check_call(const Tensors& t, uint64_t call, RankSamples& samples) {
    if (!plan_.check || !job_.is_worker()) return Status::ok();
    if (device_tensors_) OMNIB_RETURN_IF_ERROR(device_tensors_->download(t.out, t.host_out));
    const uint64_t wrong = count_wrong(t.host_out, t.reference);
    if (wrong) samples.wrong[call] = wrong;
    ++samples.calls_checked;
    return Status::ok();
  }

  // What every call of one configuration works on, and how far it got.
  struct SizeRun {
    std::string cfg;  // the configuration's prefix of store names
    const Tensors* t = nullptr;
    const Workload* workload = nullptr;
    RunConfig config;
    InputStats stats;
    uint64_t call = 0;   // calls of each algorithm so far, warm-ups included
    uint64_t round = 0;  // rounds of the current run, warm-ups included
  };

  Status measure_size(size_t k, const Workload& workload) {
    SizeRun sr;
    sr.cfg = "cfg" + std::to_string(k);
    sr.config = plan_.config(k);
    sr.workload = &workload;
    auto tensors = prepare(sr.config.count(), workload, sr.stats);
    if (!tensors.is_ok()) return tensors.status();
    const Tensors& t = tensors.value();
    sr.t = &t;
    if (device_tensors_) OMNIB_RETURN_IF_ERROR(device_tensors_->upload(t.host_in));
    for (auto& s : slots_) s.samples = RankSamples(plan_.repeat);
    if (link_meter_) link_meter_->reset();
    resources_->restart();
    std::vector<DurationTally> tallies;  // --duration
    if (plan_.duration) {
      const double share_s = std::chrono::duration<double>(plan_.run_budget()).count() * plan_.repeat;
      for (const auto& s : slots_) tallies.emplace_back(frame_of(s, sr.config), share_s);
    }
    for (int run = 0; run < plan_.repeat; ++run) {
      sr.round = 0;
      for (int w = 0; w < plan_.warmup; ++w) OMNIB_RETURN_IF_ERROR(call_round(sr, run, false, 0));
      if (plan_.duration) {
        OMNIB_RETURN_IF_ERROR(run_for_duration(sr, run, tallies));
        continue;
      }
      for (int i = 0; i < plan_.iters; ++i)
        OMNIB_RETURN_IF_ERROR(call_round(sr, run, true, static_cast<uint64_t>(run) * plan_.iters + i));
    }
    if (link_meter_) {
      OMNIB_RETURN_IF_ERROR(store_barrier(*store_, sr.cfg + "/links", job_.world()));
      OMNIB_RETURN_IF_ERROR(link_meter_->switch_to(std::nullopt));
      for (size_t a = 0; a < slots_.size(); ++a) slots_[a].samples.link_bytes = link_meter_->sent(a);
    }
    if (!plan_.trace.trace_path.empty())
      OMNIB_RETURN_IF_ERROR(
          collect_configuration_trace(*store_, sr.cfg + "/trace", job_.rank, job_.world(), tracer_, trace_file_.get()));
    return report_size(sr, plan_.duration ? &tallies : nullptr);
  }

  // One round: a call of every algorithm that runs, each behind a barrier,
  // its output poisoned before and checked after.
  Status call_round(SizeRun& sr, int run, bool timed, uint64_t timed_call) {
    if (timed) OMNIB_RETURN_IF_ERROR(resources_->start());
    const Tensors& t = *sr.t;
    for (size_t a = 0; a < slots_.size(); ++a) {
      AlgoSlot& s = slots_[a];
      if (!s.collective) continue;
      // The first call of the first algorithm finds the inputs fresh.
      if (sr.call > 0 || a > 0 || !plan_.base.inplace) OMNIB_RETURN_IF_ERROR(before_call(t, *sr.workload));
      const std::string call_name =
          sr.cfg + "/" + std::to_string(run) + "/" + std::to_string(sr.round) + "/" + std::to_string(a);
      const auto barrier_begin = tracer_.before_call(timed, timed_call);
      OMNIB_RETURN_IF_ERROR(store_barrier(*store_, call_name, job_.world()));
      const auto barrier_end = Clock::now();
      // Every rank is past the previous call: its bytes have left the queues.
      if (link_meter_)
        OMNIB_RETURN_IF_ERROR(link_meter_->switch_to(timed ? std::optional<size_t>(a) : std::nullopt));
      const auto wire_before = s.collective->wire_counters();
      const CpuTime cpu0 = process_cpu_time();
      const auto t0 = Clock::now();
      Status st = s.collective->allreduce(t.in, t.out);
      const auto t1 = Clock::now();
      const CpuTime cpu1 = process_cpu_time();
      if (!st.is_ok()) return st.with_context(s.info->name + ": ");
      OMNIB_RETURN_IF_ERROR(tracer_.after_call(
          {s.info->name, sr.config.size_bytes, timed, timed_call, barrier_begin, barrier_end, t0, t1}, s.samples));
      if (timed) {
        s.samples.times_us[static_cast<size_t>(run)].push_back(
            std::chrono::duration<double, std::micro>(t1 - t0).count());
        s.samples.cpu[static_cast<size_t>(run)] += cpu1 - cpu0;
        if (const char* route = s.collective->last_route()) ++s.samples.routes[route];
        const auto wire_after = s.collective->wire_counters();
        if (wire_before && wire_after) {
          if (!s.samples.wire) s.samples.wire = ByteCounters{};
          *s.samples.wire += *wire_after - *wire_before;
        }
      }
      // No rank checks (or poisons the next output) before every rank has
      // left the call: on a host the ranks share, that work would take the
      // CPU from a rank still in the call and stretch its time.
      OMNIB_RETURN_IF_ERROR(store_barrier(*store_, call_name + "/done", job_.world()));
      OMNIB_RETURN_IF_ERROR(check_call(t, sr.call, s.samples));
      resources_->count_call();
    }
    ++sr.call;
    ++sr.round;
    return Status::ok();
  }

  // --duration: batches of timed rounds until the run's share of the time is
  // spent. Rank 0 sizes each batch and every rank learns it before starting
  // it, so all make the same calls; after each batch rank 0 folds every
  // rank's samples into `tallies` and, every --checkpoint-interval, rewrites
  // the reports with the records so far.
  Status run_for_duration(SizeRun& sr, int run, std::vector<DurationTally>& tallies) {
    DurationPacer pacer(plan_.run_budget());
    const std::string prefix = sr.cfg + "/" + std::to_string(run);
    auto since = Clock::now();
    uint64_t timed = 0;
    for (uint64_t batch = 0;; ++batch) {
      auto rounds = agree_on_batch(*store_, prefix + "/pace/" + std::to_string(batch), job_.rank, job_.world(),
                                   job_.rank == 0 ? pacer.propose() : 0);
      if (!rounds.is_ok()) return rounds.status();
      if (rounds.value() == 0) return Status::ok();
      for (uint64_t i = 0; i < rounds.value(); ++i) OMNIB_RETURN_IF_ERROR(call_round(sr, run, true, timed++));
      const auto now = Clock::now();
      const double seconds = std::chrono::duration<double>(now - since).count();
      since = now;
      auto by_algo = gather_samples(prefix + "/batch/" + std::to_string(batch), static_cast<int>(rounds.value()),
                                    sr.config.count());
      if (!by_algo.is_ok()) return by_algo.status();
      if (job_.rank != 0) continue;
      for (size_t a = 0; a < slots_.size(); ++a)
        if (slots_[a].collective) OMNIB_RETURN_IF_ERROR(tallies[a].fold(run, by_algo.value()[a], seconds));
      if (Clock::now() - last_checkpoint_ >= plan_.checkpoint_interval) OMNIB_RETURN_IF_ERROR(write_checkpoint(sr, tallies));
    }
  }

  // Rank 0, after a batch: every other rank waits for it in the next
  // batch's agreement, so all are still connected to the launcher's store.
  Status write_checkpoint(const SizeRun& sr, const std::vector<DurationTally>& tallies) {
    auto group = make_group(sr, [&](size_t a, ResultRecord& r) { tallies[a].fill(false, r); });
    resources_->sample_launcher();
    return publish(group, false);
  }

  // Rank 0: the resources so far and `group` to every report, as a finished
  // configuration or as a checkpoint of the one in progress.
  Status publish(const std::vector<ResultRecord>& group, bool finished) {
    const ResourcesReport resources = resources_->report();
    for (auto& rep : reporters_) {
      rep->set_resources(resources);
      OMNIB_RETURN_IF_ERROR(finished ? rep->add_group(group) : rep->checkpoint(group));
    }
    last_checkpoint_ = Clock::now();
    return Status::ok();
  }

  // Every rank sends rank 0 its samples since the last gather (and starts
  // them afresh) with its resources; rank 0 keeps the resources and gets the
  // samples as [algorithm][rank], checked to hold `iters` times per run;
  // the others get nothing.
  Result<std::vector<std::vector<RankSamples>>> gather_samples(const std::string& name, int iters, uint64_t elements) {
    RankReport mine;
    auto resources = resources_->mine();
    if (!resources.is_ok()) return resources.status();
    mine.resources = resources.take();
    for (auto& s : slots_) {
      mine.algos.push_back(std::move(s.samples));
      s.samples = RankSamples(plan_.repeat);
    }
    auto all = store_gather_to_root(*store_, name, job_.rank, job_.world(), to_json(mine).dump());
    if (!all.is_ok()) return all.status();
    if (job_.rank != 0) return std::vector<std::vector<RankSamples>>{};
    std::vector<std::string> names;
    for (const auto& s : slots_) names.push_back(s.info->name);
    // Nothing any rank measured can be longer than rank 0 has been running.
    const double seconds = std::chrono::duration<double>(Clock::now() - started_).count();
    auto reports =
        parse_rank_reports(all.value(), name, names, plan_.repeat, iters, PeerBounds::for_run(seconds, elements));
    if (!reports.is_ok()) return reports.status();
    std::vector<ProcessResources> processes;
    for (const auto& r : reports.value()) processes.push_back(r.resources);
    resources_->update(std::move(processes));
    return samples_by_algorithm(reports.value());
  }

  RecordFrame frame_of(const AlgoSlot& s, const RunConfig& config) const {
    return RecordFrame{s.info->name, config, plan_.iters, plan_.warmup, plan_.repeat, plan_.check, job_.nodes};
  }

  // `tallies`: the configuration ran for --duration (else -n).
  Status report_size(const SizeRun& sr, std::vector<DurationTally>* tallies) {
    // Rank 0 samples the launcher while the others wait in the barrier: past
    // it, a rank may finish and close its store connection.
    if (job_.rank == 0) resources_->sample_launcher();
    OMNIB_RETURN_IF_ERROR(store_barrier(*store_, sr.cfg + "/resources", job_.world()));
    // --duration: what is left since the last batch (link bytes, checks).
    auto by_algo = gather_samples(sr.cfg + "/results", tallies ? 0 : plan_.iters, sr.config.count());
    if (!by_algo.is_ok()) return by_algo.status();
    if (job_.rank != 0) return Status::ok();
    for (size_t a = 0; tallies && a < slots_.size(); ++a)
      if (slots_[a].collective) OMNIB_RETURN_IF_ERROR((*tallies)[a].fold(plan_.repeat - 1, by_algo.value()[a], 0));
    auto group = make_group(sr, [&](size_t a, ResultRecord& r) {
      if (tallies) (*tallies)[a].fill(true, r);
      else combine_rank_samples(frame_of(slots_[a], sr.config), by_algo.value()[a], r);
    });
    for (const auto& r : group)
      if (r.correct == false) any_wrong_ = true;
    thresholds_.add_group(group);
    return publish(group, true);
  }

  // The records of one configuration, every algorithm's outcome filled by
  // `outcome` (skipped algorithms have none).
  std::vector<ResultRecord> make_group(const SizeRun& sr,
                                       const std::function<void(size_t, ResultRecord&)>& outcome) const {
    const RunConfig& config = sr.config;
    const InputStats& stats = sr.stats;
    CostInputs cost;
    cost.nodes = job_.nodes;
    cost.aggregators = job_.aggregators;
    cost.count = config.count();
    cost.elem_size = dtype_size(config.dtype);
    cost.block_size = config.block_size;
    cost.element_density = stats.element_density;
    cost.block_density = stats.block_density;
    cost.union_block_density = stats.union_block_density;
    cost.union_element_density = stats.union_element_density;
    cost.link_rate_bps = config.link_rate_bps;
    parse_shard_layout(config.shard_layout, &cost.shard_layout);
    parse_encoding_policy(config.encoding, &cost.encoding);
    parse_route_policy(config.route, &cost.route);
    cost.support = support_.get();
    std::vector<ResultRecord> group;
    for (size_t a = 0; a < slots_.size(); ++a) {
      const AlgoSlot& s = slots_[a];
      ResultRecord r;
      r.algo = s.info->name;
      r.dense = !s.info->exploits_sparsity;
      r.config = config;
      r.inputs = stats;
      const WireCost model = s.info->analytic_cost(cost);
      r.analytic_sent_per_rank_max = model.sent_per_rank_max;
      r.analytic_sent_total = model.sent_total;
      r.analytic_exact = model.exact;
      if (!s.collective) {
        r.skipped = true;
        r.skip_reason = s.skip_reason;
        group.push_back(r);
        continue;
      }
      outcome(a, r);
      const double seconds = r.time_us.median * 1e-6;
      r.algbw_GBps = seconds > 0 ? static_cast<double>(config.size_bytes) / seconds / 1e9 : 0;
      r.busbw_GBps = job_.nodes > 1 ? r.algbw_GBps * 2.0 * (job_.nodes - 1) / job_.nodes : r.algbw_GBps;
      if (!r.wire_sent_per_rank_max) r.wire_note = s.collective->wire_note();
      r.note = s.collective->run_note();
      r.setup_us = s.setup_us;
      group.push_back(r);
    }
    compute_speedups(group);
    return group;
  }

  const RunPlan& plan_;
  const LaunchEnv& launch_;
  std::string command_line_;
  std::vector<std::unique_ptr<Reporter>> reporters_;
  JobLayout job_;
  uint32_t job_id_ = 0;
  std::unique_ptr<TcpStoreServer> store_server_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<LinkFactory> links_;
  std::vector<std::string> hosts_;
  std::vector<AlgoSlot> slots_;
  std::unique_ptr<Buffers> buffers_;
  std::unique_ptr<InputSupport> support_;  // rank 0: every rank's non-zeros of the current size
  std::unique_ptr<DeviceTensors> device_tensors_;  // --device cuda
  std::unique_ptr<LinkMeter> link_meter_;  // --net emulate: this rank's link counter
  bool any_wrong_ = false;
  double barrier_latency_us_ = 0;  // median of a few start-up store barriers, this rank's
  ThresholdCheck thresholds_{plan_.thresholds};
  TraceCollector tracer_{plan_.trace};
  std::unique_ptr<TraceFile> trace_file_;  // rank 0, --trace
  std::unique_ptr<RunResources> resources_;  // made at rendezvous
  Clock::time_point last_checkpoint_;  // rank 0: when the reports were last written
  const Clock::time_point started_ = Clock::now();  // before the rendezvous: every rank's work comes after
};

}  // namespace

int run_allreduce_rank(const RunPlan& plan, const LaunchEnv& launch, const std::string& command_line,
                       std::vector<std::unique_ptr<Reporter>> reporters) {
  RankRun run(plan, launch, command_line, std::move(reporters));
  return run.run();
}

}  // namespace omnib
