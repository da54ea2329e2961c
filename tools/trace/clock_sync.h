// Putting every rank's trace on rank 0's clock (docs/profiling.md). Each rank
// sends rank 0 a few probes over a link of its own; rank 0 answers each with
// its clock. From the probe with the shortest round trip (the least queueing,
// as NTP does), offset = (sent + received) / 2 - rank 0's reading, with error
// at most half that round trip. Ranks of one host share CLOCK_MONOTONIC, so
// there the offset must come out near zero: a check of the method.
//
// Every call blocks until its probes are answered or the links' timeout passes.
#pragma once

#include <functional>
#include <vector>

#include "engine/base/status.h"
#include "engine/transport/connection.h"
#include "engine/links/link_factory.h"
#include "tools/record/span_record.h"

namespace omnib {

inline constexpr int kClockProbeRounds = 16;

// Nanoseconds of the clock to align (trace::now_ns in a run; tests shift it).
using ClockReader = std::function<int64_t()>;

// Rank 0: answers `rounds` probes on each link, one link after another.
Status serve_clock_probes(const std::vector<Connection*>& links, int rounds, const ClockReader& now);

// Any other rank: probes rank 0 `rounds` times over `link`.
Result<ClockOffset> probe_clock(Connection& link, int rounds, const ClockReader& now);

// Every rank of the job calls this at the same point: links each rank to
// rank 0 and measures its offset (zero for rank 0 itself).
Result<ClockOffset> align_clock_to_rank0(LinkFactory& links, int rank, int world);

}  // namespace omnib
