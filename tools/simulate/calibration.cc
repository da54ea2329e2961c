#include "tools/simulate/calibration.h"

#include "tools/common/atomic_file.h"
#include "tools/common/json_fields.h"
#include "tools/common/regular_file.h"

namespace omnib {
namespace {

constexpr uint64_t kMaxCalibrationBytes = 1 << 20;

Status read_bounded(const nlohmann::json& j, const char* name, double low, double high, bool open_low, double& out) {
  OMNIB_RETURN_IF_ERROR(read_field(j, name, out));
  if (out > high || out < low || (open_low && out == low))
    return usage_error(std::string("calibration field '") + name + "': " + std::to_string(out) + " is outside " +
                       (open_low ? "(" : "[") + std::to_string(low) + ", " + std::to_string(high) + "]");
  return Status::ok();
}

}  // namespace

nlohmann::json calibration_to_json(const Calibration& c) {
  nlohmann::json j = {{"calibration_version", kCalibrationVersion},
          {"network",
           {{"model", "CM02"},
            {"latency_factor", c.latency_factor},
            {"bandwidth_factor", c.bandwidth_factor},
            {"incast_factor", c.incast_factor}}},
          {"compute",
           {{"scan_s_per_byte", c.rates.scan_s_per_byte}, {"reduce_s_per_byte", c.rates.reduce_s_per_byte}}},
          {"made_by", {{"host", c.host}, {"command", c.command}, {"utc", c.made_utc}}}};
  if (c.fit_points > 0)
    j["fit"] = {{"from", c.fitted_to},
                {"points", c.fit_points},
                {"lossy_points", c.fit_lossy_points},
                {"rms_log_error", c.fit_rms_log_error},
                {"rms_log_error_with_lossy", c.fit_rms_log_error_judged}};
  return j;
}

Result<Calibration> calibration_from_json(const nlohmann::json& j) {
  if (!j.is_object()) return usage_error("a calibration must be a JSON object");
  int version = 0;
  OMNIB_RETURN_IF_ERROR(read_field(j, "calibration_version", version));
  if (version != kCalibrationVersion)
    return usage_error("calibration_version " + std::to_string(version) + " is not " +
                       std::to_string(kCalibrationVersion) + ": calibrate again with this build");
  Calibration c;
  auto network = object_field(j, "network");
  if (!network.is_ok()) return network.status();
  std::string model;
  OMNIB_RETURN_IF_ERROR(read_field(*network.value(), "model", model));
  if (model != "CM02") return usage_error("calibration network model '" + model + "' is not CM02");
  OMNIB_RETURN_IF_ERROR(read_bounded(*network.value(), "latency_factor", 0, 100, true, c.latency_factor));
  OMNIB_RETURN_IF_ERROR(read_bounded(*network.value(), "bandwidth_factor", 0, 1.5, true, c.bandwidth_factor));
  if (network.value()->contains("incast_factor"))
    OMNIB_RETURN_IF_ERROR(read_bounded(*network.value(), "incast_factor", 0, 1, true, c.incast_factor));
  auto compute = object_field(j, "compute");
  if (!compute.is_ok()) return compute.status();
  OMNIB_RETURN_IF_ERROR(read_bounded(*compute.value(), "scan_s_per_byte", 0, 1e-3, false, c.rates.scan_s_per_byte));
  OMNIB_RETURN_IF_ERROR(read_bounded(*compute.value(), "reduce_s_per_byte", 0, 1e-3, false, c.rates.reduce_s_per_byte));
  auto made = object_field(j, "made_by");
  if (!made.is_ok()) return made.status();
  OMNIB_RETURN_IF_ERROR(read_field(*made.value(), "host", c.host));
  OMNIB_RETURN_IF_ERROR(read_field(*made.value(), "command", c.command));
  OMNIB_RETURN_IF_ERROR(read_field(*made.value(), "utc", c.made_utc));
  if (j.contains("fit")) {
    auto fit = object_field(j, "fit");
    if (!fit.is_ok()) return fit.status();
    OMNIB_RETURN_IF_ERROR(read_field(*fit.value(), "from", c.fitted_to));
    OMNIB_RETURN_IF_ERROR(read_field(*fit.value(), "points", c.fit_points));
    OMNIB_RETURN_IF_ERROR(read_field(*fit.value(), "rms_log_error", c.fit_rms_log_error));
    // Absent from files made before the port model: no lossy point was fitted.
    if (fit.value()->contains("lossy_points")) {
      OMNIB_RETURN_IF_ERROR(read_field(*fit.value(), "lossy_points", c.fit_lossy_points));
      OMNIB_RETURN_IF_ERROR(read_field(*fit.value(), "rms_log_error_with_lossy", c.fit_rms_log_error_judged));
    }
  }
  return c;
}

Result<Calibration> read_calibration(const std::string& path) {
  auto text = read_regular_file(path, kMaxCalibrationBytes, "calibration file", "docs/simulation.md says what it holds");
  if (!text.is_ok()) return text.status();
  const nlohmann::json j = parse_untrusted_json(text.value());
  if (j.is_discarded()) return usage_error("--calibration " + path + " is not JSON");
  auto c = calibration_from_json(j);
  if (!c.is_ok()) return c.status().with_context("--calibration " + path + ": ");
  c.value().path = path;
  return c;
}

Status write_calibration(const std::string& path, const Calibration& c) {
  return write_file_atomically(path, calibration_to_json(c).dump(2) + "\n");
}

}  // namespace omnib
