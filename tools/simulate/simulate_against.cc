#include "tools/simulate/simulate_against.h"

#include <cstdio>

#include "tools/common/atomic_file.h"
#include "tools/process/child_process.h"
#include "tools/record/environment_info.h"
#include "tools/report/json_reporter.h"
#include "tools/simulate/calibration_fit.h"
#include "tools/simulate/point_simulator.h"
#include "tools/simulate/validation.h"

namespace omnib {
namespace {

int failure(const Status& s) {
  std::fprintf(stderr, "omni-bench simulate: %s\n", s.message().c_str());
  return exit_code(s.code());
}

std::string joined(const std::vector<std::string>& argv) {
  std::string out;
  for (size_t i = 0; i < argv.size(); ++i) out += (i ? " " : "") + (i == 0 ? std::string("omni-bench") : argv[i]);
  return out;
}

// Where --calibrate keeps the sweep it runs: beside the calibration.
std::string runs_path_for(const std::string& calibration_path) {
  const std::string suffix = ".json";
  std::string stem = calibration_path;
  if (stem.size() > suffix.size() && stem.compare(stem.size() - suffix.size(), suffix.size(), suffix) == 0)
    stem.resize(stem.size() - suffix.size());
  return stem + ".runs.json";
}

// Runs the calibration sweep into `json`; its progress goes to the terminal.
Status run_calibration_sweep(const std::string& json, bool force) {
  OMNIB_RETURN_IF_ERROR(check_output_path(json, force, "--force to replace it"));
  ChildSpec child;
  child.argv = {"/proc/self/exe"};
  for (const auto& a : calibration_sweep_args(json)) child.argv.push_back(a);
  if (force) child.argv.push_back("--force");
  child.die_with_parent = true;
  std::string shown;
  for (size_t i = 1; i < child.argv.size(); ++i) shown += " " + child.argv[i];
  std::fprintf(stderr, "omni-bench simulate: measuring the calibration points: omni-bench%s\n", shown.c_str());
  auto started = start_child(child);
  if (!started.is_ok()) return started.status();
  const int code = wait_child(started.value().pid);
  if (code != 0)
    return unavailable_error("the calibration sweep failed (exit code " + std::to_string(code) +
                                      "); its finished points are in " + json + ": fit them with --against " + json);
  return Status::ok();
}

// The points the host kept up with (lossy ones too: the incast factor's).
std::vector<EmulatedPoint> judged(const std::vector<EmulatedPoint>& points) {
  std::vector<EmulatedPoint> kept;
  for (const auto& p : points)
    if (p.judged()) kept.push_back(p);
  return kept;
}

// Fits, writes the calibration and says what it found; returns it.
Result<Calibration> calibrate(const SimulateOptions& o, const std::string& results, const Calibration& start,
                              const std::vector<std::string>& argv) {
  auto all = load_emulated_points(results);
  if (!all.is_ok()) return all.status();
  const std::vector<EmulatedPoint> points = judged(all.value());
  size_t loss_free = 0;
  for (const auto& p : points) loss_free += p.fittable() ? 1 : 0;
  if (loss_free == 0)
    return usage_error("every point of " + results +
                       " had ranks waiting for CPUs (5% of the call or more) or links losing packets (1% of their "
                       "bytes retransmitted): nothing to fit; measure with fewer ranks per core, slower links, or "
                       "fewer ranks sending to one");
  auto simulator = PointSimulator::prepare(points);
  if (!simulator.is_ok()) return simulator.status();
  PointSimulator& sim = *simulator.value();
  std::fprintf(stderr,
               "omni-bench simulate: fitting %zu point(s) of %zu configuration(s), %zu of them lossy (the incast "
               "factor's alone); %zu starved left out\n",
               points.size(), sim.configurations(), points.size() - loss_free, all.value().size() - points.size());
  auto fit = fit_calibration(points, [&](const Calibration& c) { return sim.simulated_us(c); }, start);
  if (!fit.is_ok()) return fit.status();
  Calibration c = fit.value().calibration;
  c.host = host_name();
  c.command = joined(argv);
  c.made_utc = utc_timestamp();
  c.fitted_to = results;
  c.fit_points = fit.value().points;
  c.fit_rms_log_error = fit.value().rms_log_error;
  c.fit_lossy_points = fit.value().lossy_points;
  c.fit_rms_log_error_judged = fit.value().rms_log_error_judged;
  c.path = o.calibrate_path;
  OMNIB_RETURN_IF_ERROR(write_calibration(o.calibrate_path, c));
  std::fprintf(stdout,
               "# calibration: bandwidth factor %.4f, latency factor %.3g, incast factor %.4f, scan %.3g ns/B, reduce "
               "%.3g ns/B; rms log error %.3f over the %zu loss-free point(s), %.3f with the %zu lossy, %zu "
               "simulations; written to %s\n",
               c.bandwidth_factor, c.latency_factor, c.incast_factor, c.rates.scan_s_per_byte * 1e9,
               c.rates.reduce_s_per_byte * 1e9, c.fit_rms_log_error, c.fit_points, c.fit_rms_log_error_judged,
               c.fit_lossy_points, fit.value().evaluations, o.calibrate_path.c_str());
  for (const auto& k : fit.value().kept) std::fprintf(stdout, "# not fitted: %s\n", k.c_str());
  return c;
}

// Simulates every point of `results` under `c` and prints the table; the
// simulated records go to -J when given.
Status validate(const SimulateOptions& o, const std::string& results, const Calibration& c,
                const std::vector<std::string>& argv) {
  auto points = load_emulated_points(results);
  if (!points.is_ok()) return points.status();
  auto simulator = PointSimulator::prepare(points.value());
  if (!simulator.is_ok()) return simulator.status();
  auto records = simulator.value()->simulate(c);
  if (!records.is_ok()) return records.status();
  std::vector<ValidationRow> rows;
  for (size_t i = 0; i < points.value().size(); ++i)
    rows.push_back({&points.value()[i], records.value()[i].time_us.median});
  std::fprintf(stdout, "# simulated against %s, calibration %s\n", results.c_str(),
               c.path.empty() ? "none (factors 1, compute free)" : c.path.c_str());
  print_validation(stdout, rows, ValidationBound{});
  std::fflush(stdout);
  if (o.run.json_path.empty()) return Status::ok();
  RunContext ctx;
  ctx.command_line = joined(argv);
  ctx.configuration = {{"net", "simulate"}, {"against", results}, {"calibration", calibration_to_json(c)}};
  ctx.environment = build_environment();
  JsonReporter report(o.run.json_path);
  OMNIB_RETURN_IF_ERROR(report.begin(ctx));
  OMNIB_RETURN_IF_ERROR(report.add_group(records.value()));
  return report.finish();
}

}  // namespace

std::vector<std::string> calibration_sweep_args(const std::string& json) {
  return {"sweep",   "--link-rate", "25mbit,100mbit", "--nodes", "2,4",     "--density",
          "0.01,0.1,1", "--algo",      "omni,ring,tree,sparcml-split,allgather",
          "--sizes", "4M",          "-n",             "3",       "-w",      "1",
          "-J",      json};
}

int run_simulate_against(const SimulateOptions& o, const std::vector<std::string>& argv) {
  if (!o.run.json_path.empty()) {
    Status s = check_output_path(o.run.json_path, o.run.force, "--force to replace it");
    if (!s.is_ok()) return failure(s);
  }
  Calibration c;
  if (!o.calibration_path.empty()) {
    auto read = read_calibration(o.calibration_path);
    if (!read.is_ok()) return failure(read.status());
    c = read.take();
  }
  std::string results = o.against;
  if (!o.calibrate_path.empty()) {
    Status s = check_output_path(o.calibrate_path, o.run.force, "--force to replace it");
    if (!s.is_ok()) return failure(s);
    if (results.empty()) {
      results = runs_path_for(o.calibrate_path);
      s = run_calibration_sweep(results, o.run.force);
      if (!s.is_ok()) return failure(s);
    }
    auto fitted = calibrate(o, results, c, argv);
    if (!fitted.is_ok()) return failure(fitted.status());
    c = fitted.take();
  }
  Status s = validate(o, results, c, argv);
  return s.is_ok() ? 0 : failure(s);
}

}  // namespace omnib
