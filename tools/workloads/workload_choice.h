// Turns the --workload text (and --input) into a workload spec, plus what the
// workload itself fixes: a preset fixes size and density, .npy files fix
// them by their contents.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "engine/base/status.h"
#include "engine/base/tensor.h"
#include "tools/workloads/workload.h"

namespace omnib {

struct WorkloadChoice {
  // name, label, zipf_alpha, zipf_sorted, dense_fraction and input_dir are set; the
  // caller fills density, sizes, seed and the rest.
  WorkloadSpec shape;
  std::optional<double> density;       // fixed by a preset or the files
  std::optional<uint64_t> size_bytes;  // tensor size of a preset or the files
  // npy: the files' size is the only size (-b/-e may only repeat it); a
  // preset's size may be overridden by -b/-e (same shape and density, smaller
  // tensor).
  bool size_is_strict = false;
};

// Accepts blocks, scattered, zipf[:ALPHA[:sorted]], topk, npy (with `input_dir`) and
// preset:NAME. For npy it reads the files of ranks 0..nodes-1 (nodes <= 0:
// world size not known yet; the files that exist from rank0.npy on).
Result<WorkloadChoice> choose_workload(const std::string& text, const std::string& input_dir, int nodes,
                                       DType dtype);

// "blocks, scattered, zipf[:ALPHA[:sorted]], topk, npy, preset:NAME", for messages.
std::string workload_names();
// "deeplight, lstm-gbw, ...".
std::string preset_names();

}  // namespace omnib
