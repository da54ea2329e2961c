#include "tools/simulate/calibration_fit.h"

#include <cmath>

namespace omnib {
namespace {

// The searched ranges: a flow reaches between half and all of a link (and
// a little more: tc's buckets let short bursts pass above the rate); scans
// and reductions run between free and 5 ns per byte (200 MB/s, far slower
// than any host's memory); path latencies from a tenth to 100 times the
// links' delay.
constexpr double kLowestBandwidth = 0.5, kHighestBandwidth = 1.2;
constexpr double kSlowestRate = 5e-9;
constexpr double kLatencyLow = 0.1, kLatencyHigh = 100;
// A port fed by converging senders keeps between half and all of its rate.
constexpr double kIncastLow = 0.5, kIncastHigh = 1.0;
constexpr int kGoldenSteps = 14;  // shrinks each range to 0.1% of itself

class Objective {
 public:
  // `lossy_too`: judge every point the host kept up with, not only the
  // loss-free ones.
  Objective(const std::vector<EmulatedPoint>& points, const SimulateAll& simulate, bool lossy_too)
      : points_(points), simulate_(simulate), lossy_too_(lossy_too) {}

  // Over the fitted points: the mean Huber loss of the log of simulated
  // over emulated (squared within 10%, growing only linearly beyond, so that
  // points the model cannot explain do not drag the factors away from the
  // points it can), and the plain rms log error the file reports.
  struct Score {
    double loss = 0;
    double rms_log = 0;
  };
  Result<Score> operator()(const Calibration& c) {
    auto us = simulate_(c);
    if (!us.is_ok()) return us.status();
    ++evaluations_;
    const double delta = std::log(1.1);
    double loss = 0, squares = 0;
    size_t n = 0;
    for (size_t i = 0; i < points_.size(); ++i) {
      if (!counts(points_[i])) continue;
      const double l = std::fabs(std::log(std::max(us.value()[i], 1e-3) / points_[i].median_us));
      loss += l <= delta ? l * l : delta * (2 * l - delta);
      squares += l * l;
      ++n;
    }
    if (n == 0) return Score{};
    return Score{loss / static_cast<double>(n), std::sqrt(squares / static_cast<double>(n))};
  }
  size_t evaluations() const { return evaluations_; }

 private:
  bool counts(const EmulatedPoint& p) const { return lossy_too_ ? p.judged() : p.fittable(); }

  const std::vector<EmulatedPoint>& points_;
  const SimulateAll& simulate_;
  const bool lossy_too_;
  size_t evaluations_ = 0;
};

// Golden-section search of one parameter of `best` over [low, high], after
// trying both ends (which the search itself never reaches: an incast factor
// of exactly 1 is "no loss"); keeps the best value seen (never worse than
// where it started).
Status search(const FitParameter& p, Objective& f, Calibration& best, Objective::Score& best_score) {
  const double phi = (std::sqrt(5.0) - 1) / 2;
  double a = p.low, b = p.high;
  Calibration trial = best;
  auto at = [&](double x) -> Result<double> {
    p.in(trial) = x;
    auto v = f(trial);
    if (!v.is_ok()) return v.status();
    if (v.value().loss < best_score.loss) {
      best_score = v.value();
      best = trial;
    }
    return v.value().loss;
  };
  for (double end : {p.low, p.high}) {
    auto v = at(end);
    if (!v.is_ok()) return v.status();
  }
  double x1 = b - phi * (b - a), x2 = a + phi * (b - a);
  auto f1 = at(x1);
  if (!f1.is_ok()) return f1.status();
  auto f2 = at(x2);
  if (!f2.is_ok()) return f2.status();
  double v1 = f1.value(), v2 = f2.value();
  for (int step = 0; step < kGoldenSteps; ++step) {
    if (v1 <= v2) {
      b = x2, x2 = x1, v2 = v1;
      x1 = b - phi * (b - a);
      auto v = at(x1);
      if (!v.is_ok()) return v.status();
      v1 = v.value();
    } else {
      a = x1, x1 = x2, v1 = v2;
      x2 = a + phi * (b - a);
      auto v = at(x2);
      if (!v.is_ok()) return v.status();
      v2 = v.value();
    }
  }
  return Status::ok();
}

}  // namespace

std::vector<FitParameter> fit_parameters(const std::vector<EmulatedPoint>& points, std::vector<std::string>& kept) {
  std::vector<FitParameter> params{
      {"bandwidth_factor", &Calibration::bandwidth_factor, nullptr, kLowestBandwidth, kHighestBandwidth},
      {"scan_s_per_byte", nullptr, &ComputeRates::scan_s_per_byte, 0, kSlowestRate},
      {"reduce_s_per_byte", nullptr, &ComputeRates::reduce_s_per_byte, 0, kSlowestRate},
  };
  bool delayed = false;
  for (const auto& p : points) delayed = delayed || (!p.starved() && p.config.link_delay_ns > 0);
  if (delayed)
    params.push_back({"latency_factor", &Calibration::latency_factor, nullptr, kLatencyLow, kLatencyHigh});
  else
    kept.push_back("latency_factor (no point had link delay to fit it to)");
  bool lossy = false;
  for (const auto& p : points) lossy = lossy || (p.judged() && p.lossy());
  if (lossy)
    params.push_back({"incast_factor", &Calibration::incast_factor, nullptr, kIncastLow, kIncastHigh, true});
  else
    kept.push_back("incast_factor (no point's links lost packets to fit it to)");
  return params;
}

Result<CalibrationFit> fit_calibration(const std::vector<EmulatedPoint>& points, const SimulateAll& simulate,
                                       const Calibration& start, int rounds) {
  CalibrationFit fit;
  for (const auto& p : points) {
    fit.points += p.fittable() ? 1 : 0;
    fit.lossy_points += p.judged() && p.lossy() ? 1 : 0;
  }
  if (fit.points == 0)
    return usage_error("every measured point had ranks waiting for CPUs (5% of the call or more) or links losing "
                       "packets (1% of their bytes retransmitted): nothing to fit; measure with fewer ranks per core, "
                       "slower links, or fewer ranks sending to one");
  const std::vector<FitParameter> params = fit_parameters(points, fit.kept);
  // Coordinate descent on two objectives: each parameter's search keeps
  // what improves its own (a parameter of the other moved the calibration
  // since, so each search starts from that objective's score there).
  Objective loss_free(points, simulate, false), judged(points, simulate, true);
  auto start_score = judged(start);
  if (!start_score.is_ok()) return start_score.status();
  Calibration best = start;
  for (int round = 0; round < rounds; ++round)
    for (const auto& p : params) {
      Objective& f = p.lossy_points_too ? judged : loss_free;
      auto score = f(best);
      if (!score.is_ok()) return score.status();
      Objective::Score best_score = score.value();
      OMNIB_RETURN_IF_ERROR(search(p, f, best, best_score));
    }
  // Each search kept what its own objective liked; the two may pull apart,
  // so the result must also beat the start over every judged point.
  auto end_score = judged(best);
  if (!end_score.is_ok()) return end_score.status();
  Objective::Score judged_score = end_score.value();
  if (judged_score.loss > start_score.value().loss) {
    best = start;
    judged_score = start_score.value();
    fit.kept.push_back("every parameter: the fit ended worse than its start over the judged points");
  }
  for (const auto& p : params) fit.fitted.emplace_back(p.name);
  auto loss_free_score = loss_free(best);
  if (!loss_free_score.is_ok()) return loss_free_score.status();
  fit.calibration = best;
  fit.evaluations = loss_free.evaluations() + judged.evaluations();
  fit.rms_log_error = loss_free_score.value().rms_log;
  fit.rms_log_error_judged = judged_score.rms_log;
  return fit;
}

}  // namespace omnib
