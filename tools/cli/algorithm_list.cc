#include "tools/cli/algorithm_list.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "engine/collective/collective.h"
#include "tools/allreduce/allreduce_options.h"
#include "tools/allreduce/device_tensors.h"

namespace omnib {
namespace {

// Why `allreduce --device <device>` would skip it on this host, or nullopt.
std::optional<std::string> skip_reason(const CollectiveInfo& info, DeviceKind device) {
  if (device == DeviceKind::kCuda && !info.device_tensors) return "runs on host tensors only";
  if (device == DeviceKind::kCuda) {
    const std::string no_gpu = device_tensors_unavailable_reason();
    if (!no_gpu.empty()) return no_gpu;
  }
  CollectiveSetup setup;
  setup.job = JobLayout{0, 2, 0};
  setup.device = device;
  return info.unavailable_reason(setup);
}

// "default" (in the default --algo set), "yes" (runs when asked) or "no".
std::string cell(const std::string& name, const std::optional<std::string>& reason, DeviceKind device) {
  if (reason) return "no";
  const auto defaults = default_algos(device);
  return std::find(defaults.begin(), defaults.end(), name) != defaults.end() ? "default" : "yes";
}

}  // namespace

int list_algorithms() {
  std::printf("%-22s %-7s %-9s %-9s %s\n", "# algorithm", "family", "cpu", "cuda", "what it does");
  std::vector<std::string> reasons;
  for (const auto& name : CollectiveRegistry::instance().names()) {
    const CollectiveInfo& info = *CollectiveRegistry::instance().find(name);
    const auto on_cpu = skip_reason(info, DeviceKind::kCpu);
    const auto on_cuda = skip_reason(info, DeviceKind::kCuda);
    std::printf("%-22s %-7s %-9s %-9s %s\n", name.c_str(), info.exploits_sparsity ? "sparse" : "dense",
                cell(name, on_cpu, DeviceKind::kCpu).c_str(), cell(name, on_cuda, DeviceKind::kCuda).c_str(),
                info.summary.c_str());
    if (on_cpu) reasons.push_back(name + " with --device cpu: " + *on_cpu);
    if (on_cuda && info.device_tensors && *on_cuda != device_tensors_unavailable_reason())
      reasons.push_back(name + " with --device cuda: " + *on_cuda);
  }
  const std::string no_gpu = device_tensors_unavailable_reason();
  if (!no_gpu.empty()) reasons.push_back("every algorithm with --device cuda: " + no_gpu);
  std::printf(
      "# cpu, cuda: with --device cpu or cuda, in the default --algo set of this build (default), run when "
      "named in --algo (yes), or skipped on this host (no):\n");
  for (const auto& r : reasons) std::printf("#   %s\n", r.c_str());
  return 0;
}

}  // namespace omnib
