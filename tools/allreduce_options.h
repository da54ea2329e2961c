// The options of `omni-bench allreduce` exactly as typed, and their CLI
// binding. Nothing here is checked or derived: plan_allreduce()
// (tools/run_plan.h) turns them into an immutable RunPlan.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "engine/block_layout.h"
#include "tools/config/comma_list.h"
#include "tools/net/net_options.h"
#include "tools/threshold_check.h"
#include "tools/trace/trace_options.h"

namespace omnib {

// The algorithms measured when --algo is not given: the engine, the dense
// baselines on our transport (ring, and ps: the engine with sparsity off)
// and a sparse baseline.
inline constexpr const char* kDefaultAlgos = "omni,ring,ps,allgather";

struct AllreduceOptions {
  // nccl-tests conventions.
  std::string min_bytes_text = "32M";
  std::string max_bytes_text = "32M";
  double step_factor = 2;
  std::string sizes_text;  // --sizes: an explicit comma list instead of -b/-e/-f
  int iters = 20;
  int warmup = 5;
  int repeat = 1;  // whole interleaved runs of every algorithm
  int check = 1;
  std::string dtype_text = "float";
  int timeout_s = 60;
  std::string json_path;
  bool force = false;  // replace an existing -J file
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
  std::string algo_text = kDefaultAlgos;
  std::string device_text = "cpu";
  ThresholdOptions thresholds;  // --min-busbw, --min-speedup
  NetOptions net;               // --net, --link-rate, --link-delay
  TraceOptions trace;           // --profile, --trace, --trace-iters, --trace-buffer

  // Which options were on the command line (set by the CLI binding).
  bool nodes_given = false;
  bool density_given = false;
  bool sizes_given = false;  // -b, -e or --sizes
};

// Declares every option on `cmd`.
void bind_allreduce_options(CLI::App& cmd, AllreduceOptions& o);

}  // namespace omnib
