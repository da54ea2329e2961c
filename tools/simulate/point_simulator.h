// Simulates measured points again and again under different calibrations
// (validation, the calibration fit): each configuration is planned on the
// star its emulated links made and its inputs are generated once; every
// simulate() builds the schedules for the calibration's compute rates and
// replays them.
#pragma once

#include <memory>
#include <vector>

#include "engine/base/status.h"
#include "tools/record/result_record.h"
#include "tools/simulate/calibration.h"
#include "tools/simulate/emulated_points.h"

namespace omnib {

class PointSimulator {
 public:
  // Usage error when a point's configuration cannot be simulated.
  static Result<std::unique_ptr<PointSimulator>> prepare(const std::vector<EmulatedPoint>& points);
  ~PointSimulator();

  // One simulated record per point, in the points' order.
  Result<std::vector<ResultRecord>> simulate(const Calibration& calibration);
  // Only the simulated medians, in microseconds.
  Result<std::vector<double>> simulated_us(const Calibration& calibration);

  size_t configurations() const;

 private:
  struct Configuration;
  PointSimulator() = default;
  std::vector<std::unique_ptr<Configuration>> configurations_;
  size_t points_ = 0;
};

}  // namespace omnib
