// The options of `omni-bench allreduce` exactly as typed, and their CLI
// binding. Nothing here is checked or derived: plan_allreduce()
// (tools/allreduce/run_plan.h) turns them into an immutable RunPlan.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "engine/blocks/block_layout.h"
#include "engine/base/tensor.h"
#include "tools/common/comma_list.h"
#include "tools/net/net_options.h"
#include "tools/allreduce/threshold_check.h"
#include "tools/trace/trace_options.h"
#include "tools/allreduce/transport_options.h"

namespace omnib {

// The algorithms measured when --algo is not given: the engine, the
// strongest dense baselines this build has for the tensors' device, and a
// sparse baseline, so that `vs best dense` compares with what a user would
// otherwise run. --device cpu: omni, ps, ring, gloo-ring-chunked (when the
// build has Gloo), allgather. --device cuda: omni, ps, nccl (when the build
// has NCCL); the host-only baselines would only be skipped there. The run
// prints and records the list it used (docs/algorithms.md, "Default set").
std::vector<std::string> default_algos(DeviceKind device);
std::string default_algos_text(DeviceKind device);  // comma list

struct AllreduceOptions {
  // nccl-tests conventions.
  std::string min_bytes_text = "32M";
  std::string max_bytes_text = "32M";
  double step_factor = 2;
  std::string sizes_text;  // --sizes: an explicit comma list instead of -b/-e/-f
  int iters = 20;
  std::string duration_text;  // --duration: timed calls for this long instead of -n
  std::string checkpoint_interval_text = "60s";  // --checkpoint-interval (with --duration)
  int warmup = 5;
  int repeat = 1;  // whole interleaved runs of every algorithm
  int check = 1;
  std::string dtype_text = "float";
  int timeout_s = 60;
  std::string json_path;
  bool force = false;  // replace an existing -J file
  bool wide = false;   // every column in every row of the table
  bool inplace = false;

  // Sparse-workload and engine options.
  double density = 0.1;
  size_t block_size = kDefaultBlockSize;
  std::string overlap_text = "random";
  std::string workload_text = "blocks";  // docs/workloads.md
  std::string input_dir;                 // --input: rank<r>.npy files for --workload npy
  uint64_t seed = 1;
  int nodes = 4;
  int aggregators = 0;
  std::string algo_text;  // empty: default_algos() of the device
  std::string device_text = "cpu";
  std::string gpu_sync_text = "spin";         // --gpu-sync (with --device cuda)
  std::string shard_layout_text = "striped";  // --shard-layout
  std::string encoding_text = "auto";         // --encoding
  std::string route_text = "auto";            // --route
  ThresholdOptions thresholds;  // --min-busbw, --min-speedup
  NetOptions net;               // --net, --link-rate, --link-delay
  TransportOptions transport;   // --transport, --fabric-provider
  TraceOptions trace;           // --profile, --trace, --trace-iters, --trace-buffer

  // Which options were on the command line (set by the CLI binding).
  bool nodes_given = false;
  bool density_given = false;
  bool sizes_given = false;  // -b, -e or --sizes
  bool iters_given = false;
  bool checkpoint_interval_given = false;
  bool gpu_sync_given = false;
};

// Declares every option on `cmd`.
void bind_allreduce_options(CLI::App& cmd, AllreduceOptions& o);

}  // namespace omnib
