// Simulated medians held against emulated ones: the table of
// docs/simulation.md's validation, and whether it meets its bound (within
// 10% at 90% of the points whose ranks did not wait for CPUs, never off by
// more than 25% there).
#pragma once

#include <cstdio>
#include <vector>

#include "tools/simulate/emulated_points.h"

namespace omnib {

struct ValidationBound {
  double close = 0.10;         // a point is close within this share of the emulated median
  double close_share = 0.90;   // of the points judged, at least this many close
  double never_off = 0.25;     // and none off by more
};

struct ValidationRow {
  const EmulatedPoint* point = nullptr;
  double simulated_us = 0;
  double ratio() const { return point->median_us > 0 ? simulated_us / point->median_us : 0; }
  double off() const;  // |ratio - 1|
};

struct ValidationSummary {
  size_t judged = 0;   // points whose ranks did not wait for CPUs
  size_t close = 0;    // of those, within the bound's `close`
  size_t starved = 0;  // listed apart
  double worst_off = 0;  // over the judged points
  double rms_log = 0;    // sqrt(mean(log(sim/emu)^2)) over the judged points
  bool holds(const ValidationBound& b) const;
};

// Over the points judged, or (`loss_free`) only those whose links lost no
// more than kLossyShare of their bytes.
ValidationSummary summarize_validation(const std::vector<ValidationRow>& rows, const ValidationBound& bound,
                                       bool loss_free = false);

// The table (judged points first, then the starved ones) and the verdict.
void print_validation(std::FILE* out, const std::vector<ValidationRow>& rows, const ValidationBound& bound);

}  // namespace omnib
