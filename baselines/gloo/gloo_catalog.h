// The Gloo baselines by name: what each is called and what the report says
// about it. Needs no Gloo, so a build without it still knows the names
// (baselines/unavailable_backends.cc) and their wire-cost models.
#pragma once

#include <string>
#include <vector>

#include "engine/transport/transport_device.h"

namespace omnib {

// Which of Gloo's transports the gloo-* baselines take: ibverbs when the run
// asked for --transport fabric and this host has a verbs device (the first
// of `verbs_devices`, port 1, GID index 0), else TCP. Every worker must
// choose alike (the same hardware on every host).
struct GlooTransport {
  bool ibverbs = false;
  std::string device;  // ibverbs only
  std::string name() const { return ibverbs ? "Gloo ibverbs transport (" + device + ")" : "Gloo TCP transport"; }
};
GlooTransport choose_gloo_transport(const TransportChoice& ours, const std::vector<std::string>& verbs_devices);

enum class GlooAlgorithm { kRing, kRingChunked, kHalvingDoubling, kBcube };

inline constexpr GlooAlgorithm kAllGlooAlgorithms[] = {GlooAlgorithm::kRing, GlooAlgorithm::kRingChunked,
                                                       GlooAlgorithm::kHalvingDoubling, GlooAlgorithm::kBcube};

// Registry name, e.g. "gloo-ring".
const char* gloo_algorithm_name(GlooAlgorithm a);
// One line for `omni-bench list` and the report.
const char* gloo_algorithm_summary(GlooAlgorithm a);

// The group size ("base") our gloo-bcube uses for `nodes` ranks: the smallest
// b >= 2 with b^k == nodes, so the hypercube is complete. Gloo's bcube needs
// the node count divisible by its base; a prime count thus runs as a single
// all-to-all step (b = nodes).
int gloo_bcube_base(int nodes);

// Whether our gloo-bcube follows Gloo's bcube with an all-to-all barrier:
// when it takes more than one step (see baselines/gloo/gloo_bcube.cc).
bool gloo_bcube_needs_barrier(int nodes);

}  // namespace omnib
