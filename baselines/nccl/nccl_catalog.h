// The NCCL baselines by name: what they are called, which algorithm they
// force, what the report says about them and their bytes on the wire. Needs
// no CUDA, so a build without NCCL still knows the names
// (baselines/unavailable_backends.cc).
#pragma once

#include <array>

#include "engine/collective/collective.h"

namespace omnib {

inline constexpr const char* kNcclName = "nccl";
inline constexpr const char* kNcclSummary = "NCCL ncclAllReduce with the ring algorithm (NCCL_ALGO=Ring)";
inline constexpr const char* kNcclTreeName = "nccl-tree";
inline constexpr const char* kNcclTreeSummary =
    "NCCL ncclAllReduce with the double binary tree algorithm (NCCL_ALGO=Tree)";

// Ring allreduce: reduce-scatter then allgather, n-1 steps each of S/n
// bytes, so 2(n-1)/n * S per rank. Payload only: NCCL's protocol framing
// (LL/LL128 flags, proxy headers) is not modelled.
WireCost nccl_analytic_cost(const CostInputs& c);

// Double binary tree (baselines/common/double_binary_tree.h) with one rank per
// tree node, each tree carrying half the tensor: a rank sends each half once
// to its parent and once to each child. Payload only, as for the ring.
WireCost nccl_tree_analytic_cost(const CostInputs& c);

// One registered NCCL algorithm.
struct NcclVariant {
  const char* name;
  const char* summary;
  const char* nccl_algo;  // the value NCCL_ALGO is set to
  WireCost (*analytic_cost)(const CostInputs&);
};

inline constexpr std::array<NcclVariant, 2> kNcclVariants{{
    {kNcclName, kNcclSummary, "Ring", nccl_analytic_cost},
    {kNcclTreeName, kNcclTreeSummary, "Tree", nccl_tree_analytic_cost},
}};

}  // namespace omnib
