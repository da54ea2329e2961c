// The workload seam: what each rank's input tensor holds. A workload is
// deterministic in (seed, rank), so every rank can build every other rank's
// input and compute the reference sum locally.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "engine/blocks/block_layout.h"
#include "engine/base/status.h"
#include "engine/base/tensor.h"

namespace omnib {

// How ranks' non-zero blocks coincide: independently at random, or a fraction
// f of each rank's blocks shared by all ranks and the rest private (f = 1:
// identical sets, f = 0: disjoint sets).
struct Overlap {
  bool random = true;
  double shared_fraction = 0;
  std::string text() const;
};
Result<Overlap> parse_overlap(const std::string& text);

struct WorkloadSpec {
  // The generator: blocks, scattered, zipf, topk or npy (docs/workloads.md).
  std::string name = "blocks";
  // How results name this workload: the --workload text in canonical form
  // (e.g. "zipf:1.1", "zipf:1.1:sorted", "preset:vgg19").
  std::string label = "blocks";
  double density = 0.1;  // fraction of non-zero elements per rank
  size_t block_size = kDefaultBlockSize;
  Overlap overlap;
  uint64_t seed = 1;
  int nodes = 1;
  DType dtype = DType::kFloat32;
  // zipf: exponent of the power law over row popularity.
  double zipf_alpha = 1.1;
  // zipf: popularity follows row order (row 0 the hottest, as in a
  // frequency-sorted vocabulary) instead of a seeded permutation.
  bool zipf_sorted = false;
  // zipf: leading fraction of the tensor that is non-zero on every rank (a
  // model's dense layers in front of its embedding tables; presets set it).
  double dense_fraction = 0;
  // npy: folder holding rank0.npy, rank1.npy, ...
  std::string input_dir;
};

class Workload {
 public:
  virtual ~Workload() = default;
  // Writes rank's input into `out` (count elements on the host).
  virtual void fill(int rank, const TensorView& out) const = 0;
};

// Checks the spec (e.g. disjoint sets need density * nodes <= 1).
Result<std::unique_ptr<Workload>> make_workload(const WorkloadSpec& spec);

// Deterministic pseudo-random helpers shared by workloads.
uint64_t mix64(uint64_t x);
inline double unit_interval(uint64_t h) { return static_cast<double>(h >> 11) * 0x1.0p-53; }
// A non-zero value for element `index` of `rank`: small integers (halves for
// the float types: +-0.5 .. +-4) so that sums in any order are exact and
// every algorithm can be checked bit for bit; for bf16 and half only up to
// max_exact_ranks() ranks.
void write_nonzero_values(DType dtype, uint64_t seed, int rank, size_t first_index, size_t n, void* dst);

// The most ranks whose values (write_nonzero_values) keep every partial sum
// exact in `dtype`: a sum of r values is N/2 with |N| <= 8r, which a float
// type with p significand bits holds exactly while 8r <= 2^p. bf16 (p = 8):
// 32 ranks; half (p = 11): 256; float (p = 24) and int32 have no limit below
// the harness's 1024 ranks (INT_MAX). See docs/workloads.md.
int max_exact_ranks(DType dtype);

}  // namespace omnib
