// Backends this build lacks still have their names registered, with the
// reason and the fix, so `--algo nccl` on a build without NCCL is reported
// as skipped rather than as an unknown algorithm.
#include "baselines/gloo/gloo_catalog.h"
#include "baselines/gloo/gloo_cost_model.h"
#include "baselines/nccl/nccl_catalog.h"
#include "engine/collective/collective.h"
#include "engine/build_features.h"

namespace omnib {
namespace {

#if !OMNIB_WITH_GLOO || !OMNIB_WITH_NCCL
CollectiveInfo unavailable(std::string name, std::string summary, std::string reason,
                           std::function<WireCost(const CostInputs&)> cost) {
  return CollectiveInfo{
      std::move(name),
      std::move(summary),
      false,
      [reason](const CollectiveSetup&) -> std::optional<std::string> { return reason; },
      [reason](const CollectiveSetup&) -> Result<std::unique_ptr<Collective>> { return unavailable_error(reason); },
      std::move(cost),
  };
}
#endif

#if !OMNIB_WITH_GLOO
const bool kGlooNamesRegistered = [] {
  for (GlooAlgorithm a : kAllGlooAlgorithms)
    CollectiveRegistry::instance().add(unavailable(
        gloo_algorithm_name(a), gloo_algorithm_summary(a),
        "this build has no Gloo: install libgloo-dev (or build Gloo and point CMAKE_PREFIX_PATH at it) and rebuild",
        [a](const CostInputs& c) { return gloo_analytic_cost(a, c); }));
  return true;
}();
#endif

#if !OMNIB_WITH_NCCL
const bool kNcclNamesRegistered = [] {
  for (const NcclVariant& v : kNcclVariants)
    CollectiveRegistry::instance().add(unavailable(v.name, v.summary,
#if OMNIB_WITH_CUDA
                                                   "this build has no NCCL: install NCCL (libnccl-dev, or its files "
                                                   "under /usr/local/cuda) and rebuild",
#else
                                                   "this build has no NCCL/CUDA: install the CUDA toolkit and NCCL "
                                                   "(libnccl-dev), then rebuild with -DOMNIB_USE_CUDA=AUTO",
#endif
                                                   v.analytic_cost));
  return true;
}();
#endif

}  // namespace
}  // namespace omnib
