#include "tools/allreduce_runner.h"

#include <chrono>
#include <cstdio>
#include <optional>
#include <random>

#include <nlohmann/json.hpp>

#include "engine/bootstrap/tcp_store.h"
#include "engine/collective.h"
#include "engine/transport/link_factory.h"
#include "tools/device_tensors.h"
#include "tools/environment_info.h"
#include "tools/input_reference.h"
#include "tools/net/link_meter.h"
#include "tools/rank_rendezvous.h"
#include "tools/threshold_check.h"

namespace omnib {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

struct AlgoSlot {
  const CollectiveInfo* info = nullptr;
  std::unique_ptr<Collective> collective;
  std::string skip_reason;  // non-empty: not run
  // Per configuration.
  std::vector<double> times_us;
  uint64_t wrong = 0;
  std::optional<ByteCounters> wire_before;
  std::optional<uint64_t> wire_sent;  // over the timed iterations
};

int fail(int rank, const Status& s) {
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

class RankRun {
 public:
  RankRun(const AllreduceOptions& o, const LaunchEnv& launch, std::string command_line,
          std::vector<std::unique_ptr<Reporter>> reporters)
      : o_(o), launch_(launch), command_line_(std::move(command_line)), reporters_(std::move(reporters)) {}

  int run() {
    Status s = rendezvous();
    if (s.is_ok()) s = set_up_algorithms();
    if (s.is_ok()) s = begin_reports();
    if (s.is_ok()) s = measure_all_sizes();
    if (s.is_ok() && job_.rank == 0)
      for (auto& r : reporters_)
        if (s.is_ok()) s = r->finish();
    // Rank 0 may serve the store: it leaves only after every rank is done with it.
    if (s.is_ok() && store_) s = store_gather_to_root(*store_, "finished", job_.rank, job_.world(), "").status();
    // Peers waiting in the store stop at once instead of after -T.
    if (!s.is_ok() && store_) (void)store_->post_abort(job_.rank, s.message());
    // Tear down links before the store goes away.
    slots_.clear();
    links_.reset();
    if (!s.is_ok()) return fail(job_.rank, s);
    // Rank 0 alone holds the results; wrong results outrank missed thresholds.
    const int threshold_code = job_.rank == 0 ? thresholds_.report(stdout) : 0;
    return any_wrong_ ? exit_code(Code::kWrongResult) : threshold_code;
  }

 private:
  Status rendezvous() {
    job_.rank = launch_.rank;
    job_.aggregators = o_.aggregators;
    job_.nodes = launch_.world - o_.aggregators;
    if (job_.nodes < 1 || (o_.nodes_given && o_.nodes != job_.nodes))
      return usage_error("the launcher started " + std::to_string(launch_.world) + " ranks but --nodes " +
                         std::to_string(o_.nodes) + " --aggregators " + std::to_string(o_.aggregators) + " needs " +
                         std::to_string(o_.nodes + o_.aggregators) + ": make them agree");
    auto met = rendezvous_rank(launch_, o_.timeout_s);
    if (!met.is_ok()) return met.status();
    // met.value().barrier_latency_us is for the run's header.
    store_server_ = std::move(met.value().server);
    store_ = std::move(met.value().store);
    job_id_ = met.value().job_id;
    hosts_ = std::move(met.value().hosts);
    links_ = std::move(met.value().links);
    return Status::ok();
  }

  Status set_up_algorithms() {
    CollectiveSetup setup;
    setup.job = job_;
    setup.block_size = o_.block_size;
    setup.dtype = o_.dtype;
    setup.device = o_.device;
    setup.timeout = std::chrono::milliseconds(o_.timeout_s * 1000);
    setup.links = links_.get();
    setup.bind_host = launch_.bind_host;
    setup.store = store_.get();
    setup.job_id = job_id_;
    for (int r = 0; r < job_.nodes; ++r) {
      if (hosts_[static_cast<size_t>(r)] != hosts_[static_cast<size_t>(job_.rank)]) continue;
      if (r < job_.rank) ++setup.local_index;
      if (r != job_.rank) ++setup.local_workers;
    }
    if (o_.device == DeviceKind::kCuda) {
      setup.device_block_io = device_block_io_factory();
      // Before the collectives are made: they bind to this thread's GPU.
      if (job_.is_worker()) {
        auto tensors = DeviceTensors::create(setup.local_index, o_.sizes.back());
        if (!tensors.is_ok()) return tensors.status();
        device_tensors_ = tensors.take();
      }
    }
    // A backend every rank cannot run is skipped everywhere, so ranks agree.
    json mine = json::array();
    for (const auto& name : o_.algos) {
      const CollectiveInfo* info = CollectiveRegistry::instance().find(name);
      auto reason = info->unavailable_reason(setup);
      if (!reason && o_.device == DeviceKind::kCuda && !info->device_tensors)
        reason = "runs on host tensors only: compare it with --device cpu";
      mine.push_back(reason ? *reason : "");
    }
    auto all = store_all_gather(*store_, "availability", job_.rank, job_.world(), mine.dump());
    if (!all.is_ok()) return all.status();
    for (size_t i = 0; i < o_.algos.size(); ++i) {
      AlgoSlot slot;
      slot.info = CollectiveRegistry::instance().find(o_.algos[i]);
      for (int r = 0; r < job_.world() && slot.skip_reason.empty(); ++r) {
        std::string reason = json::parse(all.value()[static_cast<size_t>(r)])[i].get<std::string>();
        if (!reason.empty()) slot.skip_reason = reason + (r == job_.rank ? "" : " (on rank " + std::to_string(r) + ")");
      }
      if (slot.skip_reason.empty()) {
        auto c = slot.info->create(setup);
        if (!c.is_ok()) return c.status().with_context(o_.algos[i] + ": ");
        slot.collective = c.take();
      }
      slots_.push_back(std::move(slot));
    }
    bool any_runs = false;
    for (const auto& s : slots_) any_runs |= s.collective != nullptr;
    if (!any_runs) {
      std::string why;
      for (const auto& s : slots_) why += "\n  " + s.info->name + ": " + s.skip_reason;
      return unavailable_error("none of the requested algorithms can run here:" + why);
    }
    return Status::ok();
  }

  Status begin_reports() {
    if (job_.rank != 0) return Status::ok();
    RunContext ctx;
    ctx.command_line = command_line_;
    ctx.configuration = {{"sizes", o_.sizes},         {"iters", o_.iters},
                         {"warmup", o_.warmup},       {"check", o_.check == 1},
                         {"dtype", dtype_name(o_.dtype)}, {"density", o_.density},
                         {"block_size", o_.block_size}, {"overlap", o_.overlap.text()},
                         {"workload", o_.workload.shape.label},      {"seed", o_.seed},
                         {"nodes", job_.nodes},       {"aggregators", job_.aggregators},
                         {"algos", o_.algos},         {"device", device_name(o_.device)},
                         {"inplace", o_.inplace},     {"timeout_s", o_.timeout_s}};
    ctx.configuration.update(net_configuration(o_.net));
    ctx.environment = build_environment();
    ctx.environment["hosts"] = hosts_;
    ctx.environment["ranks"] = job_.world();
    ctx.environment["nodes"] = job_.nodes;
    ctx.environment["aggregators"] = job_.aggregators;
    ctx.environment["launcher"] = launch_.launcher;
    for (auto& r : reporters_) OMNIB_RETURN_IF_ERROR(r->begin(ctx));
    return Status::ok();
  }

  Status measure_all_sizes() {
    WorkloadSpec spec = o_.workload_spec();
    spec.nodes = job_.nodes;  // as launched, also when --nodes was not given
    auto workload = make_workload(spec);
    if (!workload.is_ok()) return workload.status();
    const size_t esize = dtype_size(o_.dtype);
    if (job_.is_worker()) buffers_ = std::make_unique<Buffers>(o_.sizes.back());
    if (o_.net.emulate) {
      auto meter = LinkMeter::for_this_rank(slots_.size());
      if (!meter.is_ok()) return meter.status();
      link_meter_ = meter.take();
    }
    for (size_t k = 0; k < o_.sizes.size(); ++k)
      OMNIB_RETURN_IF_ERROR(measure_size(k, o_.sizes[k] / esize, *workload.value()));
    return Status::ok();
  }

  Status measure_size(size_t config_index, size_t count, const Workload& workload) {
    TensorView in{}, out{}, ref{}, host_in{}, host_out{};
    InputStats stats;
    if (job_.is_worker()) {
      host_in = view_of(buffers_->input, count, o_.dtype);
      host_out = o_.inplace ? host_in : view_of(buffers_->output, count, o_.dtype);
      ref = view_of(buffers_->reference, count, o_.dtype);
      stats = prepare_inputs(workload, job_.rank, job_.nodes, o_.block_size, host_in, ref,
                             view_of(buffers_->scratch, count, o_.dtype))
                  .stats;
      in = host_in;
      out = host_out;
      if (device_tensors_) {
        // Inputs are made and checked on the host; the collectives see GPU copies.
        OMNIB_RETURN_IF_ERROR(device_tensors_->upload(host_in));
        in = device_tensors_->input(count, o_.dtype);
        out = o_.inplace ? in : device_tensors_->output(count, o_.dtype);
      }
    } else {
      // Dedicated aggregators hold no tensor, only its shape.
      in = out = TensorView{nullptr, count, o_.dtype, DeviceKind::kCpu};
    }
    for (auto& s : slots_) {
      s.times_us.clear();
      s.wrong = 0;
      s.wire_sent.reset();
    }
    if (link_meter_) link_meter_->reset();
    const int rounds = o_.warmup + o_.iters;
    const std::string cfg = "cfg" + std::to_string(config_index);
    for (int round = 0; round < rounds; ++round) {
      const bool timed = round >= o_.warmup;
      const bool last = round == rounds - 1;
      for (size_t a = 0; a < slots_.size(); ++a) {
        AlgoSlot& s = slots_[a];
        if (!s.collective) continue;
        // In place, the previous call (of any algorithm) left a sum in the input.
        if (o_.inplace && job_.is_worker() && (round > 0 || a > 0)) {
          workload.fill(job_.rank, host_in);
          if (device_tensors_) OMNIB_RETURN_IF_ERROR(device_tensors_->upload(host_in));
        }
        if (timed && round == o_.warmup) s.wire_before = s.collective->wire_counters();
        OMNIB_RETURN_IF_ERROR(store_barrier(*store_, cfg + "/" + std::to_string(round) + "/" + std::to_string(a),
                                            job_.world()));
        // Every rank is past the previous call: its bytes have left the queues.
        if (link_meter_) OMNIB_RETURN_IF_ERROR(link_meter_->switch_to(timed ? std::optional<size_t>(a) : std::nullopt));
        auto t0 = Clock::now();
        Status st = s.collective->allreduce(in, out);
        auto t1 = Clock::now();
        if (!st.is_ok()) return st.with_context(s.info->name + ": ");
        if (timed) s.times_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        if (last) {
          auto after = s.collective->wire_counters();
          if (after && s.wire_before) s.wire_sent = after->sent - s.wire_before->sent;
          if (o_.check && job_.is_worker()) {
            if (device_tensors_) OMNIB_RETURN_IF_ERROR(device_tensors_->download(out, host_out));
            s.wrong = count_wrong(host_out, ref);
          }
        }
      }
    }
    if (link_meter_) {
      OMNIB_RETURN_IF_ERROR(store_barrier(*store_, cfg + "/links", job_.world()));
      OMNIB_RETURN_IF_ERROR(link_meter_->switch_to(std::nullopt));
    }
    return report_size(cfg, count, stats);
  }

  Status report_size(const std::string& cfg, size_t count, const InputStats& stats) {
    json mine = json::array();
    for (const auto& s : slots_) {
      mine.push_back({{"t", s.times_us},
                      {"w", s.wrong},
                      {"s", s.wire_sent ? json(*s.wire_sent) : json(nullptr)}});
    }
    for (size_t a = 0; link_meter_ && a < slots_.size(); ++a) {
      auto sent = link_meter_->sent(a);
      mine[a]["l"] = sent ? json(*sent) : json(nullptr);
    }
    auto all = store_gather_to_root(*store_, cfg + "/results", job_.rank, job_.world(), mine.dump());
    if (!all.is_ok()) return all.status();
    if (job_.rank != 0) return Status::ok();

    std::vector<json> per_rank;
    for (const auto& text : all.value()) per_rank.push_back(json::parse(text));
    std::vector<ResultRecord> group;
    CostInputs cost;
    cost.nodes = job_.nodes;
    cost.aggregators = job_.aggregators;
    cost.count = count;
    cost.elem_size = dtype_size(o_.dtype);
    cost.block_size = o_.block_size;
    cost.element_density = stats.element_density;
    cost.block_density = stats.block_density;
    cost.union_block_density = stats.union_block_density;
    cost.union_element_density = stats.union_element_density;
    for (size_t a = 0; a < slots_.size(); ++a) {
      const AlgoSlot& s = slots_[a];
      ResultRecord r;
      r.algo = s.info->name;
      r.size_bytes = count * dtype_size(o_.dtype);
      r.count = count;
      r.dtype = std::string(dtype_name(o_.dtype));
      r.density = o_.density;
      r.block_size = o_.block_size;
      r.nodes = job_.nodes;
      r.aggregators = job_.aggregators;
      r.overlap = o_.overlap.text();
      r.workload = o_.workload.shape.label;
      r.device = std::string(device_name(o_.device));
      r.inplace = o_.inplace;
      r.seed = o_.seed;
      r.inputs = stats;
      WireCost model = s.info->analytic_cost(cost);
      r.analytic_sent_per_rank_max = model.sent_per_rank_max;
      r.analytic_sent_total = model.sent_total;
      if (!s.collective) {
        r.skipped = true;
        r.skip_reason = s.skip_reason;
        group.push_back(r);
        continue;
      }
      r.iters = o_.iters;
      // Iteration i's time is the slowest worker's.
      std::vector<double> times(static_cast<size_t>(o_.iters), 0.0);
      double sent_max = 0, sent_total = 0;
      bool have_wire = true;
      double link_max = 0, link_total = 0;
      bool have_link = true;
      uint64_t wrong = 0;
      for (int rank = 0; rank < job_.world(); ++rank) {
        const json& e = per_rank[static_cast<size_t>(rank)][a];
        if (rank < job_.nodes) {
          auto t = e["t"].get<std::vector<double>>();
          for (size_t i = 0; i < times.size() && i < t.size(); ++i) times[i] = std::max(times[i], t[i]);
        }
        wrong += e["w"].get<uint64_t>();
        if (!e.contains("l") || e["l"].is_null()) {
          have_link = false;
        } else {
          link_max = std::max(link_max, e["l"].get<double>() / o_.iters);
          link_total += e["l"].get<double>() / o_.iters;
        }
        if (e["s"].is_null()) {
          have_wire = false;
        } else {
          double per_iter = e["s"].get<double>() / o_.iters;
          sent_max = std::max(sent_max, per_iter);
          sent_total += per_iter;
        }
      }
      r.time_us = summarize(times);
      r.samples_us = times;
      const double seconds = r.time_us.median * 1e-6;
      r.algbw_GBps = seconds > 0 ? static_cast<double>(r.size_bytes) / seconds / 1e9 : 0;
      r.busbw_GBps = job_.nodes > 1 ? r.algbw_GBps * 2.0 * (job_.nodes - 1) / job_.nodes : r.algbw_GBps;
      if (have_link) {
        r.link_sent_per_rank_max = link_max;
        r.link_sent_total = link_total;
      }
      if (have_wire) {
        r.wire_sent_per_rank_max = sent_max;
        r.wire_sent_total = sent_total;
      } else {
        r.wire_note = s.collective->wire_note();
      }
      r.checked = o_.check == 1;
      r.wrong_elements = wrong;
      r.correct = !r.checked || wrong == 0;
      r.note = s.collective->run_note();
      if (!r.correct) any_wrong_ = true;
      group.push_back(r);
    }
    compute_speedups(group);
    thresholds_.add_group(group);
    for (auto& rep : reporters_) OMNIB_RETURN_IF_ERROR(rep->add_group(group));
    return Status::ok();
  }

  const AllreduceOptions& o_;
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
  std::unique_ptr<DeviceTensors> device_tensors_;  // --device cuda
  std::unique_ptr<LinkMeter> link_meter_;  // --net emulate: this rank's link counter
  bool any_wrong_ = false;
  ThresholdCheck thresholds_{o_.thresholds};
};

}  // namespace

int run_allreduce_rank(const AllreduceOptions& options, const LaunchEnv& launch, const std::string& command_line,
                       std::vector<std::unique_ptr<Reporter>> reporters) {
  RankRun run(options, launch, command_line, std::move(reporters));
  return run.run();
}

}  // namespace omnib
