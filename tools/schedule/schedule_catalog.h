// Which algorithms have a message schedule, by their registry name: the one
// place the simulator looks them up (so it never branches on a name).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tools/schedule/schedule_inputs.h"

namespace omnib {

using ScheduleBuilder = std::function<MessageSchedule(const ScheduleInputs&)>;

// The builder of `algo`, or nullptr when it has none.
const ScheduleBuilder* find_schedule(const std::string& algo);
// Every algorithm with a schedule, in a fixed order.
std::vector<std::string> scheduled_algorithms();

}  // namespace omnib
