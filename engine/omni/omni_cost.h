// The omni engine's analytic wire bytes (docs/algorithms.md): what a rank
// sends per allreduce, from average densities. Shared by omni and ps (the
// same engine with every block sent). c.omni.route picks the route counted; auto
// counts the route a warm call settles on (engine/omni/route_choice.h).
#pragma once

#include "engine/collective/collective.h"

namespace omnib {

WireCost omni_analytic_cost(const CostInputs& c, bool dense);

// How a call of these inputs travels: over how many shards (a small tensor
// is dealt to fewer) and by which route (auto: the one a warm call settles
// on), and whether the model counts it exactly (from c.support, or dense).
struct OmniPlan {
  int shards = 1;
  bool direct = false;
  bool exact = false;
};
OmniPlan omni_plan(const CostInputs& c, bool dense);

}  // namespace omnib
