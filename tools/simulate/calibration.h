// What `omni-bench simulate` takes from measurements rather than from the
// protocols: the network model's latency and bandwidth factors (SimGrid's
// network/latency-factor and network/bandwidth-factor of CM02), the share of
// its rate a port fed by converging TCP senders keeps (the replay's port
// model, converging_ports.h), and the rates of compute (ComputeRates), with
// the host and command that fitted them.
// Without --calibration every factor is 1 and compute is free: the network
// alone, as the links are specified. The file is JSON (docs/simulation.md).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "engine/base/status.h"
#include "tools/schedule/message_schedule.h"

namespace omnib {

inline constexpr int kCalibrationVersion = 1;

struct Calibration {
  double latency_factor = 1.0;    // times each path's latency
  double bandwidth_factor = 1.0;  // share of a link's rate a flow can reach
  // Share of its rate a host's port delivers while two or more senders whose
  // flows no byte budget holds feed it (their TCP overflows it and backs
  // off); absent from older files: 1, no loss.
  double incast_factor = 1.0;
  ComputeRates rates;
  // Where it came from: the file (empty for the defaults), and what made it.
  std::string path;
  std::string host;
  std::string command;
  std::string made_utc;
  // How well it fits (absent in a file written by hand): the result files
  // fitted, the points judged, and the root mean squared log of simulated
  // over measured medians there.
  std::string fitted_to;
  size_t fit_points = 0;        // loss-free
  size_t fit_lossy_points = 0;  // judged for the incast factor only
  double fit_rms_log_error = 0;  // over the loss-free points
  double fit_rms_log_error_judged = 0;  // over all of them
};

nlohmann::json calibration_to_json(const Calibration& c);
// Every field type-checked and bounded (factors in (0, 100], the incast
// factor in (0, 1], rates in [0, 1e-3] s/byte).
Result<Calibration> calibration_from_json(const nlohmann::json& j);
Result<Calibration> read_calibration(const std::string& path);
Status write_calibration(const std::string& path, const Calibration& c);

}  // namespace omnib
