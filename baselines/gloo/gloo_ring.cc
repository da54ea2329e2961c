// Registers gloo::AllreduceRing as "gloo-ring".
#include <gloo/allreduce_ring.h>

#include "baselines/gloo/gloo_collective.h"

namespace omnib {
namespace {

const CollectiveRegistration kRegistration(gloo_collective_info<gloo::AllreduceRing>(GlooAlgorithm::kRing));

}  // namespace
}  // namespace omnib
