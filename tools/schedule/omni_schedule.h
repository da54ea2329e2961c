// The omni engine's message schedule, batch by batch as the engine cuts its
// streams (engine/omni/omni_cost_parts.h: exact_cost's walk, from every
// rank's non-zeros):
//   shards route  each worker streams its batches to every shard (its own
//                 shard's stay in memory), at most `send_frames` unfinished
//                 per stream (stream_tuning.h), each once the scan has
//                 passed the batch's scan group; a shard emits a result
//                 batch once, for every worker, the batch holding that
//                 worker's last block up to the result's last block has
//                 arrived (the look-ahead tells it the rest), and sends it
//                 to every worker, in order, with the same window;
//   direct route  each worker's one stream to every other worker.
// ps (dense) is the same with every block sent whole.
#pragma once

#include "tools/schedule/schedule_inputs.h"

namespace omnib {

MessageSchedule omni_schedule(const ScheduleInputs& in, bool dense);

}  // namespace omnib
