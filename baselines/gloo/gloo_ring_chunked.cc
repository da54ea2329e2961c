// Registers gloo::AllreduceRingChunked as "gloo-ring-chunked".
#include <gloo/allreduce_ring_chunked.h>

#include "baselines/gloo/gloo_collective.h"

namespace omnib {
namespace {

const CollectiveRegistration kRegistration(gloo_collective_info<gloo::AllreduceRingChunked>(GlooAlgorithm::kRingChunked));

}  // namespace
}  // namespace omnib
