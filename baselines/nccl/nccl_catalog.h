// The NCCL baseline by name: what it is called, what the report says about
// it and its bytes on the wire. Needs no CUDA, so a build without NCCL still
// knows the name (baselines/unavailable_backends.cc).
#pragma once

#include "engine/collective.h"

namespace omnib {

inline constexpr const char* kNcclName = "nccl";
inline constexpr const char* kNcclSummary = "NCCL ncclAllReduce with the ring algorithm (NCCL_ALGO=Ring)";

// Ring allreduce: reduce-scatter then allgather, n-1 steps each of S/n
// bytes, so 2(n-1)/n * S per rank. Payload only: NCCL's protocol framing
// (LL/LL128 flags, proxy headers) is not modelled.
WireCost nccl_analytic_cost(const CostInputs& c);

}  // namespace omnib
