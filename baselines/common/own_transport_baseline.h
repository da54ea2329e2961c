// What the baselines over our own transport (ring, tree, oktopk, ...) have in
// common: a registry entry that is always available, since they need nothing
// but our links, and the calls they settle without the network.
#pragma once

#include <cstring>
#include <optional>
#include <string>
#include <utility>

#include "engine/collective/collective.h"

namespace omnib {

inline CollectiveInfo own_transport_baseline(std::string name, std::string summary, bool exploits_sparsity,
                                             decltype(CollectiveInfo::create) create,
                                             decltype(CollectiveInfo::analytic_cost) cost) {
  return CollectiveInfo{
      std::move(name),
      std::move(summary),
      exploits_sparsity,
      [](const CollectiveSetup&) -> std::optional<std::string> { return std::nullopt; },
      std::move(create),
      std::move(cost),
  };
}

// The start of every allreduce of these baselines: the call's status when
// it is settled without the network (a dedicated aggregator holds no
// tensor; counts that differ are a usage error; with one worker or no
// element out = in), nullopt when the ranks must exchange.
inline std::optional<Status> settled_locally(const JobLayout& job, const TensorView& in, const TensorView& out) {
  if (!job.is_worker()) return Status::ok();
  if (in.count != out.count) return usage_error("input and output counts differ");
  if (job.nodes > 1 && in.count > 0) return std::nullopt;
  if (out.data != in.data) std::memcpy(out.data, in.data, in.bytes());
  return Status::ok();
}

}  // namespace omnib
