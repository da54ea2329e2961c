// Gradient workloads of published sparse-allreduce evaluations: the tensor
// size (one model's gradient), its density and the shape of its sparsity.
// Sources and how each number was obtained: docs/workloads.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace omnib {

struct Preset {
  std::string name;    // used as --workload preset:<name>
  std::string model;   // what it stands for
  std::string source;  // paper and where in it
  uint64_t elements = 0;  // gradient elements: the model's parameters
  double density = 1;     // non-zero fraction of the gradient per rank
  // Generator of the sparsity: "zipf" (embedding rows behind a dense prefix),
  // "topk" (top-k sparsified dense gradient) or "blocks" (dense: density 1).
  std::string shape;
  double dense_fraction = 0;  // zipf: share of dense-layer parameters
};

const std::vector<Preset>& presets();
// nullptr when unknown.
const Preset* find_preset(const std::string& name);

}  // namespace omnib
