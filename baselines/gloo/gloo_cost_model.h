// Bytes Gloo's allreduce algorithms put on the wire, found by replaying each
// algorithm's message schedule (as the Gloo headers lay it out: chunk sizes,
// partial chunks, binary blocks, bcube groups) for every rank. No Gloo needed.
#pragma once

#include <cstddef>
#include <vector>

#include "baselines/gloo/gloo_catalog.h"
#include "engine/collective/collective.h"

namespace omnib {

// Every message on Gloo's TCP transport starts with a preamble of six 64-bit
// words (tcp::Op::preamble); the notifications that pace the algorithms carry
// one int.
inline constexpr double kGlooPreambleBytes = 48;
inline constexpr double kGlooNotificationBytes = 4;

struct GlooRankTraffic {
  double data_bytes = 0;  // tensor payload
  int data_messages = 0;
  int notifications = 0;

  double wire_bytes() const {
    return data_bytes + data_messages * kGlooPreambleBytes +
           notifications * (kGlooPreambleBytes + kGlooNotificationBytes);
  }
};

// What each rank of a `nodes`-rank Gloo context sends in one allreduce of
// `count` elements, in rank order.
std::vector<GlooRankTraffic> gloo_rank_traffic(GlooAlgorithm a, int nodes, size_t count, size_t elem_size);

// The same, summed: dense, so the densities in `c` play no part.
WireCost gloo_analytic_cost(GlooAlgorithm a, const CostInputs& c);

}  // namespace omnib
