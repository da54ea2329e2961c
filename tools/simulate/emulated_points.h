// Measured points to hold simulations against: the records of `allreduce`
// or `sweep` runs on emulated links (--net emulate), with how long each took
// and how long its ranks waited for a CPU. A point whose ranks waited for
// CPUs measured the host as much as the network (docs/profiling.md): the
// simulation, which models the network, is not judged on it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/base/status.h"
#include "tools/config/run_config.h"

namespace omnib {

// A point is starved when some rank waited for a CPU this share of the call
// or more (the bound of "the host kept up" for validation).
inline constexpr double kStarvedWaitShare = 0.05;
// A point is lossy when its TCP retransmitted this share of the bytes its
// links carried or more (a full segment, 1448 bytes, per retransmission).
inline constexpr double kLossyShare = 0.01;
inline constexpr double kSegmentBytes = 1448;

struct EmulatedPoint {
  std::string algo;
  RunConfig config;           // net "emulate"
  double median_us = 0;       // the measured median
  std::optional<double> wait_share;  // the most any rank waited for a CPU, over the call; absent: not measured
  // TCP segments all ranks retransmitted per call: packets the emulated links
  // dropped, which the flow model sees only as the incast factor (absent: not counted).
  std::optional<double> retransmits_per_call;
  std::optional<double> link_bytes_per_call;  // all ranks' links
  bool starved() const { return !wait_share || *wait_share >= kStarvedWaitShare; }
  bool lossy() const {
    return retransmits_per_call && link_bytes_per_call && *link_bytes_per_call > 0 &&
           *retransmits_per_call * kSegmentBytes >= kLossyShare * *link_bytes_per_call;
  }
  // What validation judges: the host kept up (lossy or not).
  bool judged() const { return !starved() && median_us > 0; }
  // What a calibration's factors are fitted to: judged, and the links lost
  // (almost) nothing (the incast factor is fitted to every judged point).
  bool fittable() const { return judged() && !lossy(); }
};

// Every emulated, finished, correct record of the files (a comma list) whose
// algorithm has a message schedule. Usage error when a file cannot be read
// or holds none.
Result<std::vector<EmulatedPoint>> load_emulated_points(const std::string& files);

}  // namespace omnib
