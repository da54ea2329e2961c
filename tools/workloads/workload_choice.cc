#include "tools/workloads/workload_choice.h"

#include <cstdlib>
#include <sstream>

#include "tools/workloads/npy_workload.h"
#include "tools/workloads/presets.h"

namespace omnib {
namespace {

constexpr double kDefaultZipfAlpha = 1.1;

std::string format_number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// zipf, zipf:ALPHA or zipf:ALPHA:sorted (`param` is what follows "zipf:").
Result<WorkloadChoice> choose_zipf(const std::string& param) {
  WorkloadChoice c;
  c.shape.name = "zipf";
  c.shape.zipf_alpha = kDefaultZipfAlpha;
  const size_t colon = param.find(':');
  const std::string alpha = param.substr(0, colon);
  if (colon != std::string::npos) {
    const std::string option = param.substr(colon + 1);
    if (option != "sorted")
      return usage_error("--workload zipf:" + param + " is not valid: the only option after the exponent is 'sorted' "
                         "(zipf:ALPHA:sorted, e.g. zipf:1.1:sorted: popularity follows row order)");
    c.shape.zipf_sorted = true;
  }
  if (alpha == "sorted")
    return usage_error("--workload zipf:" + param + " is not valid: give the exponent first, as zipf:ALPHA:sorted "
                       "(e.g. zipf:1.1:sorted)");
  if (!alpha.empty() || c.shape.zipf_sorted) {
    char* end = nullptr;
    c.shape.zipf_alpha = std::strtod(alpha.c_str(), &end);
    if (alpha.empty() || *end != '\0' || !(c.shape.zipf_alpha > 0 && c.shape.zipf_alpha <= 10))
      return usage_error("--workload zipf:" + param + " is not valid: give the exponent as zipf:ALPHA or "
                         "zipf:ALPHA:sorted with 0 < ALPHA <= 10 (e.g. zipf:1.1, the default, or zipf:1.1:sorted)");
  }
  c.shape.label = "zipf:" + format_number(c.shape.zipf_alpha) + (c.shape.zipf_sorted ? ":sorted" : "");
  return c;
}

Result<WorkloadChoice> choose_preset(const std::string& name, DType dtype) {
  const Preset* p = find_preset(name);
  if (!p) return usage_error("unknown --workload preset:" + name + ": choose from " + preset_names());
  WorkloadChoice c;
  c.shape.name = p->shape;
  c.shape.label = "preset:" + p->name;
  c.shape.zipf_alpha = kDefaultZipfAlpha;
  c.shape.dense_fraction = p->dense_fraction;
  c.density = p->density;
  c.size_bytes = p->elements * dtype_size(dtype);
  return c;
}

Result<WorkloadChoice> choose_npy(const std::string& input_dir, int nodes, DType dtype) {
  if (dtype_size(dtype) != 4)
    return usage_error("--workload npy replays .npy files of 4-byte elements (-d float or int32); -d " +
                       std::string(dtype_name(dtype)) +
                       " is not supported with it: measure 16-bit types on a generated workload (blocks, scattered, "
                       "zipf, topk or a preset)");
  WorkloadChoice c;
  c.shape.name = "npy";
  c.shape.label = "npy";
  c.shape.input_dir = input_dir;
  WorkloadSpec probe = c.shape;
  probe.nodes = nodes;
  probe.dtype = dtype;
  auto files = NpyWorkload::load(probe);
  if (!files.is_ok()) return files.status();
  c.density = files.value()->mean_density();
  c.size_bytes = files.value()->count() * dtype_size(dtype);
  c.size_is_strict = true;
  return c;
}

}  // namespace

std::string workload_names() { return "blocks, scattered, zipf[:ALPHA[:sorted]], topk, npy, preset:NAME"; }

std::string preset_names() {
  std::string out;
  for (const auto& p : presets()) out += (out.empty() ? "" : ", ") + p.name;
  return out;
}

Result<WorkloadChoice> choose_workload(const std::string& text, const std::string& input_dir, int nodes,
                                       DType dtype) {
  const size_t colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  const std::string param = colon == std::string::npos ? "" : text.substr(colon + 1);
  if (!input_dir.empty() && kind != "npy")
    return usage_error("--input only applies to --workload npy (it names the folder of rank<r>.npy files)");
  if (kind == "preset") return choose_preset(param, dtype);
  if (kind == "zipf") return choose_zipf(param);
  if (colon != std::string::npos)
    return usage_error("--workload " + text + ": only zipf:ALPHA[:sorted] and preset:NAME take a parameter");
  if (kind == "npy") return choose_npy(input_dir, nodes, dtype);
  if (kind == "blocks" || kind == "scattered" || kind == "topk") {
    WorkloadChoice c;
    c.shape.name = c.shape.label = kind;
    return c;
  }
  return usage_error("unknown --workload '" + text + "': use " + workload_names() + " (docs/workloads.md)");
}

}  // namespace omnib
