#include "engine/omni/omni_cost.h"

#include "engine/omni/omni_cost_parts.h"

namespace omnib {

BatchCut batch_cut(const CostInputs& c, int shards, EncodingPolicy policy, bool direct) {
  const auto tensor_bytes = static_cast<uint64_t>(c.count * c.elem_size);
  const uint64_t budget = direct ? direct_receive_budget_bytes(c.omni.link_rate_bps) : receive_budget_bytes(c.omni.link_rate_bps);
  const StreamTuning t = tune_streams(c.omni.link_rate_bps, c.nodes, tensor_bytes / static_cast<uint64_t>(shards), budget);
  return BatchCut::for_blocks(c.omni.block_size * c.elem_size, t.frame_bytes, policy);
}

double batch_bytes(EncodingPolicy policy, const BatchShape& shape, size_t elem_size) {
  return static_cast<double>(encoded_bytes(choose_encoding(policy, shape, elem_size), shape, elem_size)) +
         kBatchOverheadBytes;
}

namespace {

// The plan and the cost of the route it takes.
struct PlannedCost {
  OmniPlan plan;
  WireCost cost;
};

PlannedCost plan_and_cost(const CostInputs& c, bool dense) {
  const int all = c.aggregators > 0 ? c.aggregators : c.nodes;
  // As the engine deals the tensor: a small one to fewer shards.
  const int shards = ShardMap::active_shards(c.omni.block_size * c.elem_size, BlockLayout(c.count, c.omni.block_size).num_blocks(), all);
  // The dense baseline sends every block whole: it needs no inputs to count.
  const bool exact = c.support != nullptr || dense;
  auto cost_of = [&](RoutePolicy route) {
    const bool direct = route == RoutePolicy::kDirect;
    return exact ? exact_cost(c, dense, shards, direct) : estimated_cost(c, dense, shards, direct);
  };
  const bool possible = !dense && c.aggregators == 0 && c.nodes > 1;
  if (c.omni.route != RoutePolicy::kAuto || !possible) {
    const RoutePolicy route = possible ? c.omni.route : RoutePolicy::kShards;
    return {{shards, route == RoutePolicy::kDirect, exact}, cost_of(route).cost};
  }
  // Auto: the first call takes the shards route, the next the route its
  // traffic picks, and so on (route_choice.h); a warm call is where that
  // settles. Were it to alternate, no one call's bytes are the model's.
  const RouteCost first = cost_of(RoutePolicy::kShards);
  if (next_route(c.omni.route, RoutePolicy::kShards, first.traffic, c.nodes, possible) == RoutePolicy::kShards)
    return {{shards, false, exact}, first.cost};
  RouteCost warm = cost_of(RoutePolicy::kDirect);
  if (next_route(c.omni.route, RoutePolicy::kDirect, warm.traffic, c.nodes, possible) != RoutePolicy::kDirect)
    warm.cost.exact = false;
  return {{shards, true, warm.cost.exact}, warm.cost};
}

}  // namespace

WireCost omni_analytic_cost(const CostInputs& c, bool dense) { return plan_and_cost(c, dense).cost; }

OmniPlan omni_plan(const CostInputs& c, bool dense) { return plan_and_cost(c, dense).plan; }

}  // namespace omnib
