// The typed options of `omni-bench allreduce`, their CLI binding and checks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "engine/status.h"
#include "engine/tensor.h"
#include "tools/net/net_options.h"
#include "tools/threshold_check.h"
#include "tools/workloads/workload.h"
#include "tools/workloads/workload_choice.h"

namespace omnib {

struct AllreduceOptions {
  // nccl-tests conventions.
  std::string min_bytes_text = "32M";
  std::string max_bytes_text = "32M";
  double step_factor = 2;
  std::string sizes_text;  // --sizes: an explicit comma list instead of -b/-e/-f
  int iters = 20;
  int warmup = 5;
  int check = 1;
  std::string dtype_text = "float";
  int timeout_s = 60;
  std::string json_path;
  bool force = false;  // replace an existing -J file
  bool inplace = false;

  // Sparse-workload and engine options.
  double density = 0.1;
  size_t block_size = 256;
  std::string overlap_text = "random";
  std::string workload_text = "blocks";  // docs/workloads.md
  std::string input_dir;                 // --input: rank<r>.npy files for --workload npy
  uint64_t seed = 1;
  int nodes = 4;
  int aggregators = 0;
  std::string algo_text = "omni,ring,allgather";  // the engine, a dense and a sparse baseline
  std::string device_text = "cpu";
  ThresholdOptions thresholds;  // --min-busbw, --min-speedup
  NetOptions net;               // --net, --link-rate, --link-delay

  // Derived by validate().
  std::vector<uint64_t> sizes;
  std::vector<std::string> algos;
  DType dtype = DType::kFloat32;
  DeviceKind device = DeviceKind::kCpu;
  Overlap overlap;
  bool nodes_given = false;  // --nodes was on the command line
  bool density_given = false;  // --density was on the command line
  bool sizes_given = false;    // -b or -e was on the command line
  WorkloadChoice workload;     // from --workload; may fix density and sizes

  WorkloadSpec workload_spec() const;
};

// Declares every option on `cmd`.
void bind_allreduce_options(CLI::App& cmd, AllreduceOptions& o);
// Checks values and fills the derived fields. Usage errors say what to do.
// `local_ranks` is how many ranks will share this machine's memory.
Status validate_allreduce_options(AllreduceOptions& o, int local_ranks);

// Splits "a,b,c" (empty items are dropped).
std::vector<std::string> split_list(const std::string& text);

}  // namespace omnib
