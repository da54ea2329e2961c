#include "tools/allreduce/run_plan.h"

#include <algorithm>
#include <fstream>
#include <set>

#include "engine/collective/collective.h"
#include "engine/omni/settings/encoding_policy.h"
#include "engine/blocks/shard_map.h"
#include "engine/sockets/socket_util.h"
#include "tools/common/time_span.h"
#include "tools/common/size_parse.h"
#include "tools/workloads/workload_choice.h"

namespace omnib {
namespace {

constexpr int kMaxRepeat = 1000;
constexpr int kMaxRanks = 1024;

// Bytes this machine can still hand out, from /proc/meminfo (0 if unknown).
uint64_t available_memory_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  uint64_t kb = 0;
  std::string unit;
  while (meminfo >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  return 0;
}

Status check_counts(const AllreduceOptions& o) {
  if (o.iters < 1) return usage_error("-n/--iters must be at least 1");
  if (o.warmup < 0) return usage_error("-w/--warmup must be 0 or more");
  if (o.repeat < 1 || o.repeat > kMaxRepeat)
    return usage_error("--repeat must be between 1 and " + std::to_string(kMaxRepeat));
  if (o.check != 0 && o.check != 1) return usage_error("-c/--check takes 0 or 1");
  // The longest wait any transport accepts (engine/sockets/socket_util.h).
  if (o.timeout_s < 1 || o.timeout_s > kMaxWaitTimeout.count())
    return usage_error("-T/--timeout must be between 1 and " + std::to_string(kMaxWaitTimeout.count()) + " seconds");
  if (o.nodes < 1 || o.nodes > kMaxRanks)
    return usage_error("--nodes must be between 1 and " + std::to_string(kMaxRanks));
  if (o.aggregators < 0 || o.aggregators > kMaxRanks)
    return usage_error("--aggregators must be between 0 and " + std::to_string(kMaxRanks));
  return Status::ok();
}

constexpr std::chrono::milliseconds kMinDuration{1000};
constexpr std::chrono::milliseconds kMaxDuration{int64_t{30} * 24 * 3600 * 1000};  // 30 days

// --duration and --checkpoint-interval, and what they cannot be combined with.
Status apply_duration(const AllreduceOptions& o, RunPlan& plan) {
  if (o.duration_text.empty()) {
    if (o.checkpoint_interval_given)
      return usage_error("--checkpoint-interval applies to --duration runs (a -n run rewrites -J after every size): "
                         "add --duration or drop --checkpoint-interval");
    return Status::ok();
  }
  if (o.iters_given)
    return usage_error("--duration and -n/--iters both set how many timed calls run: drop one of them");
  if (o.trace.active())
    return usage_error("--duration cannot be combined with --profile or --trace (they keep every call's spans): "
                       "profile a run with -n instead");
  auto duration = parse_time_span("--duration", o.duration_text, kMinDuration, kMaxDuration);
  if (!duration.is_ok()) return duration.status();
  auto interval = parse_time_span("--checkpoint-interval", o.checkpoint_interval_text, kMinDuration, kMaxDuration);
  if (!interval.is_ok()) return interval.status();
  plan.duration = duration.value();
  plan.checkpoint_interval = interval.value();
  return Status::ok();
}

constexpr size_t kMinTraceBuffer = 16;
constexpr size_t kMaxTraceBuffer = size_t{1} << 24;

Status check_trace(const AllreduceOptions& o) {
  const TraceOptions& t = o.trace;
  if (t.trace_iters < 0) return usage_error("--trace-iters must be 0 (every timed call) or more");
  if (t.trace_iters > 0 && !t.active())
    return usage_error("--trace-iters limits what --trace or --profile records: add one of them");
  if (t.events_per_thread < kMinTraceBuffer || t.events_per_thread > kMaxTraceBuffer)
    return usage_error("--trace-buffer must be between " + std::to_string(kMinTraceBuffer) + " and " +
                       std::to_string(kMaxTraceBuffer) + " spans");
  if (!t.trace_path.empty() && t.trace_path == o.json_path)
    return usage_error("--trace and -J name the same file: give the trace a file of its own");
  return Status::ok();
}

Result<std::vector<std::string>> check_algos(const AllreduceOptions& o, DeviceKind device) {
  if (o.algo_text.empty()) return default_algos(device);
  std::vector<std::string> algos = split_list(o.algo_text);
  if (algos.empty()) return usage_error("--algo is empty: name at least one algorithm");
  std::set<std::string> seen;
  for (const auto& a : algos) {
    if (!CollectiveRegistry::instance().find(a)) {
      std::string known;
      for (const auto& n : CollectiveRegistry::instance().names()) known += (known.empty() ? "" : ", ") + n;
      return usage_error("unknown algorithm '" + a + "' in --algo: choose from " + known);
    }
    if (!seen.insert(a).second) return usage_error("--algo names '" + a + "' twice: list each algorithm once");
  }
  return algos;
}

// Applies what --workload fixes: a preset's density and size (-b/-e may
// shrink the tensor), the .npy files' density and size (-b/-e may only
// repeat it). Under an external launcher without --nodes the world size is
// not known in the launcher; the ranks plan again with it.
Status apply_workload(const AllreduceOptions& o, int known_nodes, RunPlan& plan) {
  auto choice = choose_workload(o.workload_text, o.input_dir, known_nodes, plan.base.dtype);
  if (!choice.is_ok()) return choice.status();
  const WorkloadChoice& c = choice.value();
  const std::string what = "--workload " + o.workload_text;
  plan.workload = c.shape;
  if (c.density) {
    if (o.density_given && o.density != *c.density)
      return usage_error(what + " sets the density itself (" + std::to_string(*c.density) + "): drop --density");
    plan.base.density = *c.density;
  }
  if (!c.size_bytes) return Status::ok();
  const uint64_t fixed = *c.size_bytes;
  if (o.sizes_given) {
    if (c.size_is_strict && (plan.sizes.size() != 1 || plan.sizes[0] != fixed))
      return usage_error(what + ": the files hold " + std::to_string(fixed) +
                         " bytes per rank: drop -b/-e or set both to " + std::to_string(fixed));
    return Status::ok();
  }
  plan.sizes = {fixed};
  return Status::ok();
}

// The harness's values keep 16-bit sums exact only on so many ranks; beyond,
// correct algorithms could round differently and the check would fail them.
Status check_exact_sums(DType dtype, int nodes) {
  const int limit = max_exact_ranks(dtype);
  if (nodes <= limit) return Status::ok();
  const std::string wider = dtype == DType::kBFloat16
                                ? "-d half (up to " + std::to_string(max_exact_ranks(DType::kFloat16)) + ") or -d float"
                                : "-d float";
  return usage_error("-d " + std::string(dtype_name(dtype)) +
                     " keeps the sums of the generated values exact on at most " + std::to_string(limit) +
                     " ranks, and --nodes is " + std::to_string(nodes) + " (docs/workloads.md, \"Exact sums\"): use --nodes " +
                     std::to_string(limit) + " or fewer, or " + wider);
}

Status check_memory(const RunPlan& plan, int local_ranks) {
  // Each local rank holds input, output and reference copies of the largest
  // size plus one scratch tensor (and, for 16-bit types, the reference's
  // fp32 sum: two more tensors' worth); refuse what cannot fit rather than swap.
  const long double copies = is_16bit_float(plan.base.dtype) ? 6.0L : 4.0L;
  const long double need = static_cast<long double>(plan.sizes.back()) * copies * local_ranks;
  const uint64_t avail = available_memory_bytes();
  if (avail > 0 && need > static_cast<long double>(avail))
    return usage_error("the largest size, " + format_size(plan.sizes.back()) + " bytes, on " +
                       std::to_string(local_ranks) + " local ranks needs about " +
                       format_bytes(static_cast<double>(need)) + " of memory but only " +
                       format_bytes(static_cast<double>(avail)) + " is available: lower -e/--maxbytes or --nodes");
  return Status::ok();
}

}  // namespace

std::chrono::nanoseconds RunPlan::run_budget() const {
  if (!duration) return std::chrono::nanoseconds(0);
  const auto runs = static_cast<int64_t>(sizes.size()) * repeat;
  return std::chrono::duration_cast<std::chrono::nanoseconds>(*duration) / std::max<int64_t>(runs, 1);
}

RunConfig RunPlan::config(size_t k) const {
  RunConfig c = base;
  c.size_bytes = sizes.at(k);
  return c;
}

nlohmann::json RunPlan::describe() const {
  nlohmann::json j = base.key();
  j.erase("size_bytes");
  j["sizes"] = sizes;
  j["algos"] = algos;
  j["algos_default"] = default_algos;
  j["iters"] = iters;
  if (duration) {
    j["iters"] = nullptr;  // the clock decides
    j["duration_s"] = std::chrono::duration<double>(*duration).count();
    j["checkpoint_interval_s"] = std::chrono::duration<double>(checkpoint_interval).count();
  }
  j["warmup"] = warmup;
  j["repeat"] = repeat;
  j["check"] = check;
  j["timeout_s"] = timeout_s;
  if (trace.active())
    j["profiling"] = {{"profile", trace.profile},
                      {"trace", trace.trace_path},
                      {"trace_iters", trace.trace_iters},
                      {"trace_buffer", trace.events_per_thread}};
  return j;
}

namespace {

// The data and the job: type, density, blocks, overlap, seed, ranks.
Status plan_data_and_job(const AllreduceOptions& o, std::optional<int> launched_world, RunConfig& c) {
  auto dt = parse_dtype(o.dtype_text);
  if (!dt)
    return usage_error("-d/--datatype '" + o.dtype_text + "' is not supported: use " + std::string(dtype_choices()));
  c.dtype = *dt;
  c.density = o.density;  // make_workload() checks its range, in plan_workload
  if (o.block_size == 0)
    return usage_error("--block-size must be at least 1 element (" + std::to_string(kDefaultBlockSize) +
                       " is the default)");
  if (o.block_size > (64u << 20) / dtype_size(c.dtype))
    return usage_error("--block-size is too large: at most 16M elements");
  c.block_size = o.block_size;
  c.seed = o.seed;
  c.inplace = o.inplace;
  c.aggregators = o.aggregators;
  c.nodes = o.nodes;
  if (launched_world) {
    const int nodes = *launched_world - o.aggregators;
    if (nodes < 1 || (o.nodes_given && o.nodes != nodes))
      return usage_error("the launcher started " + std::to_string(*launched_world) + " ranks but --nodes " +
                         std::to_string(o.nodes) + " --aggregators " + std::to_string(o.aggregators) + " needs " +
                         std::to_string(o.nodes + o.aggregators) + ": make them agree");
    c.nodes = nodes;
  }
  return check_exact_sums(c.dtype, c.nodes);
}

// Where tensors live and how the omni engine runs: device (and how workers
// wait for it), shard layout, encoding, route; each vocabulary parsed here, once.
Status plan_engine(const AllreduceOptions& o, RunConfig& c) {
  if (o.device_text == "cpu" || o.device_text == "cuda")
    c.device = o.device_text == "cpu" ? DeviceKind::kCpu : DeviceKind::kCuda;
  else
    return usage_error("--device '" + o.device_text + "' is not known: use cpu or cuda");
  if (!parse_gpu_sync(o.gpu_sync_text, &c.gpu_sync))
    return usage_error("--gpu-sync '" + o.gpu_sync_text + "' is not known: use spin or blocking");
  if (o.gpu_sync_given && c.device == DeviceKind::kCpu)
    return usage_error("--gpu-sync sets how a worker waits for its GPU, and --device cpu uses none: add --device cuda, "
                       "or drop --gpu-sync");
  if (!parse_shard_layout(o.shard_layout_text, &c.shard_layout))
    return usage_error("--shard-layout '" + o.shard_layout_text + "' is not known: use striped or contiguous");
  if (!parse_encoding_policy(o.encoding_text, &c.encoding))
    return usage_error("--encoding '" + o.encoding_text + "' is not known: use auto, blocks, bitmap or coo");
  if (!parse_route_policy(o.route_text, &c.route))
    return usage_error("--route '" + o.route_text + "' is not known: use auto, shards or direct");
  if (c.route == RoutePolicy::kDirect && (c.aggregators > 0 || c.nodes < 2))
    return usage_error("--route direct needs --nodes 2 or more and no --aggregators: use --route auto or shards");
  return Status::ok();
}

// The links: emulated or not, and the transport.
Status plan_network(const AllreduceOptions& o, RunPlan& plan) {
  RunConfig& c = plan.base;
  NetOptions net = o.net;
  OMNIB_RETURN_IF_ERROR(validate_net_options(net, c.nodes + c.aggregators));
  plan.emulate = net.emulate;
  plan.link = net.link;
  plan.tcp = net.tcp;
  if (net.emulate) {
    c.net = "emulate";
    c.link_rate_bps = net.link.rate_bps;
    c.link_delay_ns = static_cast<uint64_t>(net.link.delay.count());
    c.tcp_cc = net.tcp.congestion;
    c.tcp_idle_restart = idle_restart_name(net.tcp.idle_restart);
  }
  auto transport = resolve_transport(o.transport, net.emulate);
  if (!transport.is_ok()) return transport.status();
  plan.transport = transport.take();
  c.transport = transport_identity(plan.transport);
  return Status::ok();
}

// The sizes and the inputs' generator, checked once here, in the launcher,
// rather than in every rank.
Status plan_workload(const AllreduceOptions& o, int local_ranks, bool nodes_known, RunPlan& plan) {
  RunConfig& c = plan.base;
  auto overlap = parse_overlap(o.overlap_text);
  if (!overlap.is_ok()) return overlap.status();
  c.overlap = overlap.value().text();
  auto sizes = size_series({o.sizes_text, o.min_bytes_text, o.max_bytes_text, o.step_factor, dtype_size(c.dtype)});
  if (!sizes.is_ok()) return sizes.status();
  plan.sizes = sizes.take();
  OMNIB_RETURN_IF_ERROR(apply_workload(o, nodes_known ? c.nodes : 0, plan));
  c.workload = plan.workload.label;
  plan.workload.density = c.density;
  plan.workload.block_size = c.block_size;
  plan.workload.overlap = overlap.value();
  plan.workload.seed = c.seed;
  plan.workload.nodes = c.nodes;
  plan.workload.dtype = c.dtype;
  if (auto w = make_workload(plan.workload); !w.is_ok()) return w.status();
  return check_memory(plan, local_ranks);
}

}  // namespace

Result<RunPlan> plan_allreduce(const AllreduceOptions& o, int local_ranks, std::optional<int> launched_world) {
  OMNIB_RETURN_IF_ERROR(check_counts(o));
  OMNIB_RETURN_IF_ERROR(check_trace(o));
  RunPlan plan;
  OMNIB_RETURN_IF_ERROR(apply_duration(o, plan));
  plan.iters = o.iters;
  plan.warmup = o.warmup;
  plan.repeat = o.repeat;
  plan.check = o.check == 1;
  plan.timeout_s = o.timeout_s;
  plan.json_path = o.json_path;
  plan.force = o.force;
  plan.thresholds = o.thresholds;
  plan.trace = o.trace;
  OMNIB_RETURN_IF_ERROR(plan_data_and_job(o, launched_world, plan.base));
  OMNIB_RETURN_IF_ERROR(plan_engine(o, plan.base));
  auto algos = check_algos(o, plan.base.device);
  if (!algos.is_ok()) return algos.status();
  plan.algos = algos.take();
  plan.default_algos = o.algo_text.empty();
  OMNIB_RETURN_IF_ERROR(validate_threshold_options(plan.thresholds, plan.algos));
  OMNIB_RETURN_IF_ERROR(plan_network(o, plan));
  const bool nodes_known = launched_world || o.nodes_given || local_ranks > 1;
  OMNIB_RETURN_IF_ERROR(plan_workload(o, local_ranks, nodes_known, plan));
  return plan;
}

}  // namespace omnib
