// The message schedules of the dense baselines, frame by frame as they send
// (baselines/dense): ring's 2(n-1) steps, each segment in 256 KiB frames,
// frame f of a step forwarded once frame f of the step before has arrived;
// tree's two binary trees, each frame going up once the children's frame
// has arrived and down once the parent's has. Two frames in flight per link.
#pragma once

#include "tools/schedule/schedule_inputs.h"

namespace omnib {

MessageSchedule ring_schedule(const ScheduleInputs& in);
MessageSchedule tree_schedule(const ScheduleInputs& in);

// Frames a dense sender keeps in flight on one link.
inline constexpr size_t kDenseLinkWindow = 2;

}  // namespace omnib
