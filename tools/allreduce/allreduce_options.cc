#include "tools/allreduce/allreduce_options.h"

#include "engine/build_features.h"

namespace omnib {

std::vector<std::string> default_algos(DeviceKind device) {
  if (device == DeviceKind::kCuda) {
    std::vector<std::string> algos{"omni", "ps"};
    if (OMNIB_WITH_NCCL) algos.push_back("nccl");
    return algos;
  }
  std::vector<std::string> algos{"omni", "ps", "ring"};
  if (OMNIB_WITH_GLOO) algos.push_back("gloo-ring-chunked");
  algos.push_back("allgather");
  return algos;
}

std::string default_algos_text(DeviceKind device) {
  std::string out;
  for (const auto& a : default_algos(device)) out += (out.empty() ? "" : ",") + a;
  return out;
}

namespace {

// The options whose presence (not only value) matters to the plan.
struct GivenOptions {
  CLI::Option* min_bytes = nullptr;
  CLI::Option* max_bytes = nullptr;
  CLI::Option* size_list = nullptr;
  CLI::Option* iters = nullptr;
  CLI::Option* checkpoint = nullptr;
  CLI::Option* density = nullptr;
  CLI::Option* nodes = nullptr;
  CLI::Option* gpu_sync = nullptr;
};

void bind_size_and_timing(CLI::App& cmd, AllreduceOptions& o, GivenOptions& given) {
  const char* group = "Sizes and timing";
  given.min_bytes = cmd.add_option("-b,--minbytes", o.min_bytes_text, "smallest tensor size in bytes (K/M/G suffixes)")
                        ->capture_default_str()
                        ->group(group);
  given.max_bytes = cmd.add_option("-e,--maxbytes", o.max_bytes_text, "largest tensor size in bytes")
                        ->capture_default_str()
                        ->group(group);
  cmd.add_option("-f,--stepfactor", o.step_factor, "multiply the size by this between steps")
      ->capture_default_str()
      ->group(group);
  given.size_list =
      cmd.add_option("--sizes", o.sizes_text, "comma list of sizes in bytes (instead of -b/-e/-f)")->group(group);
  given.iters = cmd.add_option("-n,--iters", o.iters, "timed iterations per size and algorithm")
                    ->capture_default_str()
                    ->group(group);
  cmd.add_option("--duration", o.duration_text,
                 "instead of -n: run timed calls for this wall-clock time (e.g. 30s, 10m, 2h), split evenly over the "
                 "sizes and --repeat runs; every algorithm makes the same calls")
      ->group(group);
  given.checkpoint = cmd.add_option("--checkpoint-interval", o.checkpoint_interval_text,
                                    "with --duration: rewrite the -J file this often with the records so far")
                         ->capture_default_str()
                         ->group(group);
  cmd.add_option("-w,--warmup", o.warmup, "untimed warm-up iterations")->capture_default_str()->group(group);
  cmd.add_option("--repeat", o.repeat,
                 "whole interleaved runs of every algorithm (warm-up and timed iterations each); compare judges "
                 "the spread between runs")
      ->capture_default_str()
      ->group(group);
  cmd.add_option("-T,--timeout", o.timeout_s, "seconds any single network wait may take before the run fails")
      ->capture_default_str()
      ->group(group);
}

void bind_inputs(CLI::App& cmd, AllreduceOptions& o, GivenOptions& given) {
  const char* group = "Inputs";
  cmd.add_option("-d,--datatype", o.dtype_text,
                 "element type: float, int32, bf16 or half (16-bit types: at most 32 (bf16) or 256 (half) nodes)")
      ->capture_default_str()
      ->group(group);
  given.density = cmd.add_option("--density", o.density, "fraction of non-zero elements per rank, in [0,1]")
                      ->capture_default_str()
                      ->group(group);
  cmd.add_option("--block-size", o.block_size, "elements per block")->capture_default_str()->group(group);
  cmd.add_option("--overlap", o.overlap_text, "how ranks' non-zero blocks coincide: random, full, none, or a fraction")
      ->capture_default_str()
      ->group(group);
  cmd.add_option(
         "--workload", o.workload_text,
         "input generator: blocks, scattered, zipf[:ALPHA[:sorted]], topk, npy, preset:NAME (docs/workloads.md)")
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--input", o.input_dir, "folder of rank0.npy, rank1.npy, ... for --workload npy")->group(group);
  cmd.add_option("--seed", o.seed, "seed of the generated inputs")->capture_default_str()->group(group);
  cmd.add_flag("--inplace", o.inplace, "reduce in place (output buffer = input buffer)")->group(group);
  cmd.add_option("--device", o.device_text, "where tensors live: cpu or cuda")->capture_default_str()->group(group);
  given.gpu_sync = cmd.add_option("--gpu-sync", o.gpu_sync_text,
                                  "with --device cuda, how a worker waits for its GPU: spin (busy-wait) or blocking "
                                  "(sleep, for ranks that share CPU cores; docs/gpu.md)")
                       ->capture_default_str()
                       ->group(group);
}

void bind_ranks_and_algorithms(CLI::App& cmd, AllreduceOptions& o, GivenOptions& given) {
  const char* group = "Ranks and algorithms";
  given.nodes =
      cmd.add_option("--nodes", o.nodes, "worker ranks (forked locally unless launched by mpirun/srun/torchrun)")
          ->capture_default_str()
          ->group(group);
  cmd.add_option("--aggregators", o.aggregators, "dedicated aggregator processes (0: one shard per worker)")
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--algo", o.algo_text,
                 "comma list of algorithms (default, in this build: " + default_algos_text(DeviceKind::kCpu) +
                     " with --device cpu; " + default_algos_text(DeviceKind::kCuda) + " with --device cuda)")
      ->group(group);
  cmd.add_option("--shard-layout", o.shard_layout_text,
                 "how the engine deals blocks to shards: striped (even load for skewed tensors) or contiguous")
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--encoding", o.encoding_text,
                 "how the engine encodes the blocks it sends: auto (per batch, the smallest), blocks, bitmap or coo")
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--route", o.route_text,
                 "how the omni engine sends non-zeros: auto (per call, the cheaper), shards (through the "
                 "aggregator shards) or direct (to every worker)")
      ->capture_default_str()
      ->group(group);
}

void bind_output_and_profiling(CLI::App& cmd, AllreduceOptions& o) {
  const char* group = "Output and profiling";
  cmd.add_option("-c,--check", o.check, "check every call's result against the reference sum (0 or 1)")
      ->capture_default_str()
      ->group(group);
  cmd.add_option("-J,--json", o.json_path, "write results as JSON to this file (docs/json-schema.md)")->group(group);
  cmd.add_flag("--force", o.force, "replace the -J and --trace files if they exist")->group(group);
  cmd.add_flag("--wide", o.wide,
               "every column in every row (size, type and densities too; about 190 characters) instead of a "
               "configuration line over rows that fit 120")
      ->group(group);
  cmd.add_flag("--profile", o.trace.profile,
               "per algorithm, where the slowest rank's time goes (compute, send, wait, barrier), CPU per wire "
               "byte and per call (against ring's), under --net emulate the link limit, and the host's memory "
               "floor (measured once, then cached): a block under the table and in the JSON")
      ->group(group);
  cmd.add_option("--trace", o.trace.trace_path,
                 "write a Chrome trace-event file of every rank's spans (open it in Perfetto; docs/profiling.md)")
      ->group(group);
  cmd.add_option("--trace-iters", o.trace.trace_iters,
                 "trace only the first K timed calls of each algorithm and size (0: all)")
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--trace-buffer", o.trace.events_per_thread,
                 "spans each thread can hold per call; more are dropped and counted")
      ->capture_default_str()
      ->group(group);
}

}  // namespace

void bind_allreduce_options(CLI::App& cmd, AllreduceOptions& o) {
  GivenOptions given;
  bind_size_and_timing(cmd, o, given);
  bind_inputs(cmd, o, given);
  bind_ranks_and_algorithms(cmd, o, given);
  bind_output_and_profiling(cmd, o);
  bind_threshold_options(cmd, o.thresholds);
  bind_net_options(cmd, o.net);
  bind_transport_options(cmd, o.transport);
  cmd.callback([&o, given] {
    o.iters_given = given.iters->count() > 0;
    o.checkpoint_interval_given = given.checkpoint->count() > 0;
    o.nodes_given = given.nodes->count() > 0;
    o.density_given = given.density->count() > 0;
    o.gpu_sync_given = given.gpu_sync->count() > 0;
    o.sizes_given = given.min_bytes->count() > 0 || given.max_bytes->count() > 0 || given.size_list->count() > 0;
  });
}

}  // namespace omnib
