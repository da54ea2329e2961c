// Fits a calibration to measured points: the bandwidth factor, the compute
// rates and (when some point had link delay) the latency factor that make
// the simulated medians closest to the emulated ones, closest meaning the
// least mean Huber loss of the log of simulated over emulated (so that a
// point off by 10% weighs the same at 50 ms and at 5 s, and points off by
// far more, which the model cannot explain, weigh only linearly). Points
// whose ranks waited for CPUs are left out: they measured the host
// (emulated_points.h). Those factors are fitted to the points whose links
// lost (almost) nothing; the incast factor (when some point's links lost
// packets) to every point the host kept up with, lossy or not, since it
// slows every port that converging senders feed, whether or not its queue
// overflowed in the measurement.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "engine/base/status.h"
#include "tools/simulate/calibration.h"
#include "tools/simulate/emulated_points.h"

namespace omnib {

// The simulated medians of the points under a calibration (PointSimulator).
using SimulateAll = std::function<Result<std::vector<double>>(const Calibration&)>;

// One parameter the fit moves, and the range it searches.
struct FitParameter {
  const char* name;
  double Calibration::*factor = nullptr;  // or
  double ComputeRates::*rate = nullptr;
  double low = 0, high = 0;
  bool lossy_points_too = false;  // judged on every point the host kept up with, not only loss-free ones
  double& in(Calibration& c) const { return factor ? c.*factor : c.rates.*rate; }
};

struct CalibrationFit {
  Calibration calibration;
  size_t points = 0;        // the loss-free points fitted (not starved)
  size_t lossy_points = 0;  // and the lossy ones (the incast factor's only)
  size_t evaluations = 0;   // simulations of all of them
  double rms_log_error = 0; // at the fitted calibration, over the loss-free points
  double rms_log_error_judged = 0;  // and over every judged point, lossy ones too
  std::vector<std::string> fitted, kept;  // parameter names moved, and left as they were (and why)
};

// The parameters fitted to `points`: the bandwidth factor and both compute
// rates always, the latency factor only when some point had link delay, the
// incast factor only when some point's links lost packets.
std::vector<FitParameter> fit_parameters(const std::vector<EmulatedPoint>& points, std::vector<std::string>& kept);

// Coordinate descent from `start`: each parameter in turn by golden-section
// search over its range, `rounds` times, each judged by its own objective
// (above); a result worse than `start` over every judged point is dropped
// for `start`. Usage error when no point is fit to judge (all starved or
// lossy).
Result<CalibrationFit> fit_calibration(const std::vector<EmulatedPoint>& points, const SimulateAll& simulate,
                                       const Calibration& start, int rounds = 3);

}  // namespace omnib
