// The omni engine's analytic wire bytes (docs/algorithms.md): what a rank
// sends per allreduce, from average densities. Shared by omni and ps (the
// same engine with every block sent). c.omni.route picks the route counted; auto
// counts the route a warm call settles on (engine/omni/route_choice.h).
#pragma once

#include "engine/collective/collective.h"

namespace omnib {

WireCost omni_analytic_cost(const CostInputs& c, bool dense);

}  // namespace omnib
