#include "tools/allreduce_options.h"

#include <unistd.h>

#include <algorithm>

#include <cmath>
#include <fstream>
#include <sstream>

#include "engine/collective.h"
#include "tools/size_parse.h"

namespace omnib {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

WorkloadSpec AllreduceOptions::workload_spec() const {
  WorkloadSpec w = workload.shape;
  w.density = density;
  w.block_size = block_size;
  w.overlap = overlap;
  w.seed = seed;
  w.nodes = nodes;
  w.dtype = dtype;
  return w;
}

void bind_allreduce_options(CLI::App& cmd, AllreduceOptions& o) {
  auto* min_bytes = cmd.add_option("-b,--minbytes", o.min_bytes_text, "smallest tensor size in bytes (K/M/G suffixes)")
                        ->capture_default_str();
  auto* max_bytes = cmd.add_option("-e,--maxbytes", o.max_bytes_text, "largest tensor size in bytes")->capture_default_str();
  cmd.add_option("-f,--stepfactor", o.step_factor, "multiply the size by this between steps")->capture_default_str();
  auto* size_list = cmd.add_option("--sizes", o.sizes_text, "comma list of sizes in bytes (instead of -b/-e/-f)");
  cmd.add_option("-n,--iters", o.iters, "timed iterations per size and algorithm")->capture_default_str();
  cmd.add_option("-w,--warmup", o.warmup, "untimed warm-up iterations")->capture_default_str();
  cmd.add_option("-c,--check", o.check, "check results against the reference sum (0 or 1)")->capture_default_str();
  cmd.add_option("-d,--datatype", o.dtype_text, "element type: float or int32")->capture_default_str();
  cmd.add_option("-T,--timeout", o.timeout_s, "seconds any single network wait may take before the run fails")
      ->capture_default_str();
  cmd.add_option("-J,--json", o.json_path, "write results as JSON to this file (docs/json-schema.md)");
  cmd.add_flag("--force", o.force, "replace the -J file if it exists");
  cmd.add_flag("--inplace", o.inplace, "reduce in place (output buffer = input buffer)");
  auto* density = cmd.add_option("--density", o.density, "fraction of non-zero elements per rank, in [0,1]")
                      ->capture_default_str();
  cmd.add_option("--block-size", o.block_size, "elements per block")->capture_default_str();
  cmd.add_option("--overlap", o.overlap_text, "how ranks' non-zero blocks coincide: random, full, none, or a fraction")
      ->capture_default_str();
  cmd.add_option("--workload", o.workload_text,
                 "input generator: blocks, scattered, zipf[:ALPHA], topk, npy, preset:NAME (docs/workloads.md)")
      ->capture_default_str();
  cmd.add_option("--input", o.input_dir, "folder of rank0.npy, rank1.npy, ... for --workload npy");
  cmd.add_option("--seed", o.seed, "seed of the generated inputs")->capture_default_str();
  auto* nodes = cmd.add_option("--nodes", o.nodes, "worker ranks (forked locally unless launched by mpirun/srun/torchrun)")
                    ->capture_default_str();
  cmd.add_option("--aggregators", o.aggregators, "dedicated aggregator processes (0: one shard per worker)")
      ->capture_default_str();
  cmd.add_option("--algo", o.algo_text, "comma list of algorithms")->capture_default_str();
  cmd.add_option("--device", o.device_text, "where tensors live: cpu or cuda")->capture_default_str();
  bind_threshold_options(cmd, o.thresholds);
  bind_net_options(cmd, o.net);
  cmd.callback([&o, nodes, density, min_bytes, max_bytes, size_list] {
    o.nodes_given = nodes->count() > 0;
    o.density_given = density->count() > 0;
    o.sizes_given = min_bytes->count() > 0 || max_bytes->count() > 0 || size_list->count() > 0;
  });
}

namespace {

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

// Applies what --workload fixes: a preset's density and size (-b/-e may
// shrink the tensor), the .npy files' density and size (-b/-e may only
// repeat it). Under an external launcher without --nodes the world size is
// not known here; the runner checks the files against it.
Status apply_workload_choice(AllreduceOptions& o, int local_ranks) {
  const int known_nodes = o.nodes_given || local_ranks > 1 ? o.nodes : 0;
  auto choice = choose_workload(o.workload_text, o.input_dir, known_nodes, o.dtype);
  if (!choice.is_ok()) return choice.status();
  o.workload = choice.take();
  const std::string what = "--workload " + o.workload_text;
  if (o.workload.density) {
    if (o.density_given && o.density != *o.workload.density)
      return usage_error(what + " sets the density itself (" + std::to_string(*o.workload.density) +
                         "): drop --density");
    o.density = *o.workload.density;
  }
  if (!o.workload.size_bytes) return Status::ok();
  const uint64_t fixed = *o.workload.size_bytes;
  if (o.sizes_given) {
    if (o.workload.size_is_strict && (o.sizes.size() != 1 || o.sizes[0] != fixed))
      return usage_error(what + ": the files hold " + std::to_string(fixed) + " bytes per rank: drop -b/-e or set both to " +
                         std::to_string(fixed));
    return Status::ok();
  }
  o.sizes = {fixed};
  o.min_bytes_text = o.max_bytes_text = std::to_string(fixed);
  return Status::ok();
}

}  // namespace

Status validate_allreduce_options(AllreduceOptions& o, int local_ranks) {
  auto min_b = parse_size(o.min_bytes_text);
  if (!min_b.is_ok()) return min_b.status();
  auto max_b = parse_size(o.max_bytes_text);
  if (!max_b.is_ok()) return max_b.status();
  if (min_b.value() > max_b.value())
    return usage_error("-b/--minbytes (" + o.min_bytes_text + ") is larger than -e/--maxbytes (" + o.max_bytes_text + ")");
  if (!(o.step_factor > 1) && min_b.value() != max_b.value())
    return usage_error("-f/--stepfactor must be greater than 1");
  if (o.iters < 1) return usage_error("-n/--iters must be at least 1");
  if (o.warmup < 0) return usage_error("-w/--warmup must be 0 or more");
  if (o.check != 0 && o.check != 1) return usage_error("-c/--check takes 0 or 1");
  if (o.timeout_s < 1) return usage_error("-T/--timeout must be at least 1 second");
  auto dt = parse_dtype(o.dtype_text);
  if (!dt) return usage_error("-d/--datatype '" + o.dtype_text + "' is not supported: use float or int32");
  o.dtype = *dt;
  if (!(o.density >= 0 && o.density <= 1))
    return usage_error("--density must be in [0,1] (the fraction of non-zero elements per rank)");
  if (o.block_size == 0) return usage_error("--block-size must be at least 1 element (256 is typical)");
  if (o.block_size > (64u << 20) / 4) return usage_error("--block-size is too large: at most 16M elements");
  auto ov = parse_overlap(o.overlap_text);
  if (!ov.is_ok()) return ov.status();
  o.overlap = ov.value();
  if (o.nodes < 1 || o.nodes > 1024) return usage_error("--nodes must be between 1 and 1024");
  if (o.aggregators < 0 || o.aggregators > 1024) return usage_error("--aggregators must be between 0 and 1024");
  if (o.device_text == "cpu") {
    o.device = DeviceKind::kCpu;
  } else if (o.device_text == "cuda") {
    o.device = DeviceKind::kCuda;
  } else {
    return usage_error("--device '" + o.device_text + "' is not known: use cpu or cuda");
  }

  o.algos = split_list(o.algo_text);
  if (o.algos.empty()) return usage_error("--algo is empty: name at least one algorithm");
  for (const auto& a : o.algos) {
    if (!CollectiveRegistry::instance().find(a)) {
      std::string known;
      for (const auto& n : CollectiveRegistry::instance().names()) known += (known.empty() ? "" : ", ") + n;
      return usage_error("unknown algorithm '" + a + "' in --algo: choose from " + known);
    }
  }
  OMNIB_RETURN_IF_ERROR(validate_threshold_options(o.thresholds, o.algos));
  OMNIB_RETURN_IF_ERROR(validate_net_options(o.net, o.nodes + o.aggregators));

  o.sizes.clear();
  const size_t esize = dtype_size(o.dtype);
  if (!o.sizes_text.empty()) {
    for (const auto& item : split_list(o.sizes_text)) {
      auto bytes = parse_size(item);
      if (!bytes.is_ok()) return bytes.status().with_context("--sizes: ");
      o.sizes.push_back(bytes.value() / esize * esize);
    }
    std::sort(o.sizes.begin(), o.sizes.end());
    o.sizes.erase(std::unique(o.sizes.begin(), o.sizes.end()), o.sizes.end());
  } else {
    for (long double s = static_cast<long double>(min_b.value()); s <= static_cast<long double>(max_b.value());
         s *= o.step_factor) {
      uint64_t bytes = static_cast<uint64_t>(s) / esize * esize;
      if (o.sizes.empty() || o.sizes.back() != bytes) o.sizes.push_back(bytes);
      if (o.step_factor <= 1) break;
    }
  }
  if (o.sizes.empty() || o.sizes.front() == 0)
    return usage_error("sizes must hold at least one " + std::string(dtype_name(o.dtype)) + " element (" +
                       std::to_string(esize) + " bytes)");

  OMNIB_RETURN_IF_ERROR(apply_workload_choice(o, local_ranks));

  // Each local rank holds input, output and reference copies of the largest
  // size plus one scratch tensor; refuse what cannot fit rather than swap.
  const uint64_t largest = o.sizes.back();
  const long double need = static_cast<long double>(largest) * 4.0L * local_ranks;
  const uint64_t avail = available_memory_bytes();
  if (avail > 0 && need > static_cast<long double>(avail))
    return usage_error("-e/--maxbytes " + o.max_bytes_text + " on " + std::to_string(local_ranks) +
                       " local ranks needs about " + human_bytes(static_cast<double>(need)) +
                       " of memory but only " + human_bytes(static_cast<double>(avail)) +
                       " is available: lower -e/--maxbytes or --nodes");
  return Status::ok();
}

}  // namespace omnib
