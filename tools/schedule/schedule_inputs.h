// What a schedule builder is given: the call (the cost model's inputs, with
// every rank's non-zeros in `cost.support` for the sparse algorithms), what
// compute costs, and how far fan-outs may run at once.
#pragma once

#include "engine/collective/collective.h"
#include "tools/schedule/message_schedule.h"

namespace omnib {

struct ScheduleInputs {
  CostInputs cost;
  ComputeRates rates;
  FlowLimits flows;
};

}  // namespace omnib
