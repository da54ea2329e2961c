#include "baselines/gloo/gloo_catalog.h"

#include <cmath>

namespace omnib {

GlooTransport choose_gloo_transport(const TransportChoice& ours, const std::vector<std::string>& verbs_devices) {
  GlooTransport t;
  if (ours.kind == TransportChoice::Kind::kFabric && !verbs_devices.empty()) {
    t.ibverbs = true;
    t.device = verbs_devices.front();
  }
  return t;
}

const char* gloo_algorithm_name(GlooAlgorithm a) {
  switch (a) {
    case GlooAlgorithm::kRing: return "gloo-ring";
    case GlooAlgorithm::kRingChunked: return "gloo-ring-chunked";
    case GlooAlgorithm::kHalvingDoubling: return "gloo-halving-doubling";
    case GlooAlgorithm::kBcube: return "gloo-bcube";
  }
  return "gloo-?";
}

const char* gloo_algorithm_summary(GlooAlgorithm a) {
  switch (a) {
    case GlooAlgorithm::kRing:
      return "Gloo AllreduceRing over Gloo's TCP transport: the whole tensor goes round the ring n-1 times";
    case GlooAlgorithm::kRingChunked:
      return "Gloo AllreduceRingChunked over Gloo's TCP transport: reduce-scatter + allgather ring in 2n chunks";
    case GlooAlgorithm::kHalvingDoubling:
      return "Gloo AllreduceHalvingDoubling over Gloo's TCP transport: recursive halving/doubling in binary blocks";
    case GlooAlgorithm::kBcube:
      return "Gloo AllreduceBcube over Gloo's TCP transport: reduce-scatter + allgather in groups of `base` peers";
  }
  return "";
}

namespace {

// Gloo's own step count (AllreduceBcube::computeSteps, float arithmetic and
// all): a base is usable only where it agrees with the exact exponent.
int gloo_bcube_steps(int nodes, int base) {
  float lg2n = std::log2(nodes);
  float lg2p = std::log2(base);
  return static_cast<int>(std::ceil(lg2n / lg2p));
}

}  // namespace

int gloo_bcube_base(int nodes) {
  if (nodes < 2) return 2;
  for (int base = 2; base < nodes; ++base) {
    int power = 1, exponent = 0;
    while (power < nodes) {
      power *= base;
      ++exponent;
    }
    if (power == nodes && gloo_bcube_steps(nodes, base) == exponent) return base;
  }
  return nodes;
}

bool gloo_bcube_needs_barrier(int nodes) { return nodes > 2 && gloo_bcube_base(nodes) != nodes; }

}  // namespace omnib
