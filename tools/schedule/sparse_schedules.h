// The message schedules of the sparse baselines (baselines/sparse), from
// every rank's non-zeros (ScheduleInputs::cost.support, required):
//   allgather      n-1 ring rounds; in round k a rank forwards, frame by
//                  frame, the pairs of the rank k before it, each frame once
//                  it has arrived from the left.
//   sparcml-split  round 1: every rank sends each slice owner its part of
//                  that slice; round 2, once an owner has every part: the
//                  reduced slice to every other rank. Each in the smaller of
//                  the sparse and dense forms, one stream per peer.
//   oktopk         its histogram rounds (every rank's counts to every peer;
//                  the next round once a rank has every peer's), then the
//                  same two rounds as sparcml-split over its balanced regions.
#pragma once

#include "tools/schedule/schedule_inputs.h"

namespace omnib {

MessageSchedule allgather_schedule(const ScheduleInputs& in);
MessageSchedule sparcml_split_schedule(const ScheduleInputs& in);
MessageSchedule oktopk_schedule(const ScheduleInputs& in);

// The frames of a stream of `items` items of `item_bytes` each, `per_frame`
// to a frame, with their headers (sparse_cost.h: stream_wire_bytes); at
// least one frame.
std::vector<uint64_t> stream_frame_bytes(uint64_t items, uint64_t item_bytes, uint64_t per_frame);

}  // namespace omnib
