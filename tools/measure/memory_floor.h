// The passes the memory floor times (docs/profiling.md, "The memory floor"),
// and how a host's floor is made of them. Every allreduce, whatever its
// algorithm, reads each worker's whole input and, out of place, writes its
// whole output (in place, a sparse sum may leave zeros where they are: only
// the read is unavoidable). omni's worker does exactly that and nothing more
// when no block is non-zero: its scan finds none, and its output is zeroed
// whole (HostBlockIo::find and finish_receive, what the microbenchmark
// BM_WorkerTensorPasses times). These are those two passes, through the same
// scan (engine/blocks/block_scan.h) and the same memset, on an all-zero
// input, which the scan must read to the last byte to call zero.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/base/status.h"

namespace omnib {

// Block size of the floor's scan, fixed so that the floor does not depend on
// a run's --block-size: the engine's default, as BM_WorkerTensorPasses uses.
inline constexpr size_t kFloorBlockElements = 256;
// Untimed passes before the timed ones (first use of the pages by this
// thread, the caches and TLB warmed), and the timed ones.
inline constexpr int kFloorWarmups = 1;
inline constexpr int kFloorRepetitions = 9;

// The threads each of `ranks` workers on a host reads and writes with: its
// share of the host's `cores`, at least one. A rank's memory traffic is not
// bound to one core (omni's send lane scans while its receive lane writes),
// so on a host with cores to spare one thread per rank would measure a
// core's bandwidth, not the memory's, and the floor would not be one.
int floor_threads_per_rank(int ranks, int cores);

// What one worker's pass took: its wall time, and the CPU time of its
// threads (CLOCK_THREAD_CPUTIME_ID: on a core, memory stalls included;
// waiting for a core excluded).
struct PassTime {
  double wall_us = 0;     // from the start to the end of its last thread
  double busiest_us = 0;  // the CPU time of its busiest thread
  double cpu_us = 0;      // the CPU time of all its threads
};

// One pass: `in` (`bytes` of zeros, elements of `elem_size` bytes: 2 or 4)
// scanned and `out` (`bytes`; null in place: nothing written) zeroed by
// `threads` threads, each its own contiguous piece of both, scan first. An
// internal error when `in` held a non-zero block (then less than all of it
// may have been read).
Result<PassTime> time_floor_pass(const void* in, void* out, uint64_t bytes, size_t elem_size, int threads);

// A host's floor from its workers' timed passes, times[worker][repetition]
// (the same count each), on a host of `cpus` logical CPUs. A repetition's
// time is the least its slowest worker could have taken had nothing else
// run on the host: no less than the CPU time of the busiest thread, nor
// than the CPU time of all the workers' threads spread over every CPU (where
// the workers outnumber the cores, they take turns). Wall time would count
// every moment another program held a core: on this 2-core machine, with a
// load of 5 to 8, floors from wall time came out anywhere from 2.7 to 12 ms
// from one run to the next (4 ranks, 32 MiB each), from CPU time from 4.2
// to 5.4 ms; and a floor is kept for every later run. The floor is the
// least over repetitions: what the host can do, which noise only hides.
double host_floor_us(const std::vector<std::vector<PassTime>>& times, int cpus);

// Multiplies every pass this process times from now on by `factor`. For
// omni-bench-sabotage only (tests/sabotage/sabotage_collectives.h), which
// inflates the floor to show that the floor's test catches it; omni-bench
// never calls it.
void scale_floor_passes(double factor);

}  // namespace omnib
