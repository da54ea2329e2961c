// One simulated point as a result record: the schedule's bytes where
// `allreduce` puts the measured ones, the simulator's time as the one
// "iteration", and a note saying how it was simulated.
#pragma once

#include <string>

#include "tools/record/result_record.h"
#include "tools/schedule/message_schedule.h"
#include "tools/simulate/replay.h"
#include "tools/simulate/simulation_inputs.h"

namespace omnib {

struct SimulatedPoint {
  const RunConfig& config;
  const SimulationInputs& inputs;
  const MessageSchedule& schedule;
  ReplayOutcome outcome;
  double wall_s = 0;  // building the schedule and simulating it
};

ResultRecord simulated_record(const std::string& algo, const SimulatedPoint& p);

// The record of an algorithm the simulator has no schedule for.
ResultRecord unscheduled_record(const std::string& algo, const RunConfig& config, const InputStats& inputs);

}  // namespace omnib
