// Dense parameter server (SwitchML-style): the engine's streaming aggregation
// with sparsity off, so every block crosses the wire. Isolates what skipping
// zero blocks buys.
#include "engine/omni/omni_collective.h"
#include "engine/omni/omni_cost.h"

namespace omnib {
namespace {

const CollectiveRegistration kPs(CollectiveInfo{
    "ps",
    "dense parameter server: the engine's aggregation with every block sent",
    false,
    OmniCollective::unavailable_reason,
    [](const CollectiveSetup& s) {
      OmniOptions o;
      o.dense = true;
      return OmniCollective::create(s, o);
    },
    [](const CostInputs& c) { return omni_analytic_cost(c, true); },
    true,
});

}  // namespace
}  // namespace omnib
