// Registers gloo::AllreduceHalvingDoubling as "gloo-halving-doubling".
#include <gloo/allreduce_halving_doubling.h>

#include "baselines/gloo/gloo_collective.h"

namespace omnib {
namespace {

const CollectiveRegistration kRegistration(gloo_collective_info<gloo::AllreduceHalvingDoubling>(GlooAlgorithm::kHalvingDoubling));

}  // namespace
}  // namespace omnib
