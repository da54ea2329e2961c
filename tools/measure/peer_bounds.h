// What rank 0 accepts from another rank's report: every number finite and
// within what the run could have produced so far. The reports travel
// through the rendezvous store, which anyone holding the job token can
// write; a value past these bounds (a call time of 1e308 us, 2^64-1 bytes
// sent) is nonsense, never a measurement, and the run fails naming the rank.
// The bounds are physical limits, far above any real run: an interval no
// longer than rank 0 has run, at most 1e12 bytes (1 TB) and 1e9 frames per
// second of it, CPU time of at most 4096 cores.
#pragma once

#include <cstdint>

#include "engine/status.h"
#include "tools/measure/process_resources.h"
#include "tools/measure/rank_samples.h"

namespace omnib {

struct PeerBounds {
  double max_seconds = 0;   // the longest interval any rank can have measured
  uint64_t elements = 0;    // of the configuration's tensor: wrong elements per call at most this

  // For a run that rank 0 has been running for `seconds` (with slack for
  // clocks of other hosts), on tensors of `elements` elements.
  static PeerBounds for_run(double seconds, uint64_t elements);
  double max_us() const { return max_seconds * 1e6; }
  double max_bytes() const;
  double max_frames() const;
  double max_calls() const;
};

// Usage errors name the field and say what bound it broke.
Status check_peer_samples(const RankSamples& s, const PeerBounds& b);
Status check_peer_resources(const ProcessResources& p, const PeerBounds& b);

}  // namespace omnib
