// Holding the simulation against measurements: the validation verdict
// (starved points apart, the 10%/90%/25% bound), and the calibration fit,
// which must find the factors and rates that made a set of points (here
// points simulated with a known calibration, standing in for measured ones).
#include <gtest/gtest.h>

#include <cmath>

#include "tools/simulate/calibration_fit.h"
#include "tools/simulate/point_simulator.h"
#include "tools/simulate/replay.h"
#include "tools/simulate/validation.h"

namespace omnib {
namespace {

EmulatedPoint point(double median_us, std::optional<double> wait) {
  EmulatedPoint p;
  p.algo = "ring";
  p.config.net = "emulate";
  p.median_us = median_us;
  p.wait_share = wait;
  return p;
}

TEST(Validation, JudgesOnlyPointsWhoseRanksGotTheirCpus) {
  // Ten measured points at 100 us; one starved, one whose wait was not measured.
  std::vector<EmulatedPoint> points;
  for (int i = 0; i < 10; ++i) points.push_back(point(100, 0.01));
  points.push_back(point(100, 0.20));
  points.push_back(point(100, std::nullopt));
  std::vector<ValidationRow> rows;
  for (const auto& p : points) rows.push_back({&p, 105});
  rows[10].simulated_us = 500;  // starved: not judged, however far off
  rows[11].simulated_us = 500;
  const ValidationBound bound;
  ValidationSummary s = summarize_validation(rows, bound);
  EXPECT_EQ(s.judged, 10u);
  EXPECT_EQ(s.starved, 2u);
  EXPECT_EQ(s.close, 10u);
  EXPECT_TRUE(s.holds(bound));

  rows[0].simulated_us = 115;  // one of ten 15% off: 90% close, under 25%
  s = summarize_validation(rows, bound);
  EXPECT_EQ(s.close, 9u);
  EXPECT_NEAR(s.worst_off, 0.15, 1e-9);
  EXPECT_TRUE(s.holds(bound));

  rows[1].simulated_us = 88;  // two of ten outside 10%: 80% close
  EXPECT_FALSE(summarize_validation(rows, bound).holds(bound));

  rows[1].simulated_us = 100;
  rows[0].simulated_us = 126;  // one far off fails it alone
  EXPECT_FALSE(summarize_validation(rows, bound).holds(bound));
}

// Points on 25 and 100 Mbit/s stars, simulated with `truth`: what the fit
// is given as the measurement. With `lossy_owners`, sparcml-split's points
// (whose owners hear from both other ranks at once) say their links lost
// packets, as the emulated ones do at 4 and 8 workers.
std::vector<EmulatedPoint> points_made_by(const Calibration& truth, bool lossy_owners = false) {
  std::vector<EmulatedPoint> points;
  for (uint64_t rate : {25'000'000ull, 100'000'000ull})
    for (double density : {0.05, 0.5})
      for (const char* algo : {"ring", "sparcml-split", "allgather", "omni"}) {
        EmulatedPoint p;
        p.algo = algo;
        p.config.net = "emulate";
        p.config.link_rate_bps = rate;
        p.config.nodes = 3;
        p.config.size_bytes = 256 << 10;
        p.config.density = density;
        p.wait_share = 0.0;
        if (lossy_owners && p.algo == "sparcml-split") {
          p.link_bytes_per_call = 1e6;
          p.retransmits_per_call = 100;  // 14% of the bytes
        }
        points.push_back(p);
      }
  auto sim = PointSimulator::prepare(points);
  EXPECT_TRUE(sim.is_ok()) << sim.status().message();
  auto us = sim.value()->simulated_us(truth);
  EXPECT_TRUE(us.is_ok()) << us.status().message();
  for (size_t i = 0; i < points.size(); ++i) points[i].median_us = us.value()[i];
  return points;
}

TEST(CalibrationFit, FindsTheFactorsAndRatesThatMadeThePoints) {
  if (!simulator_available()) GTEST_SKIP() << "this build lacks SimGrid";
  Calibration truth;
  truth.bandwidth_factor = 0.9;
  truth.rates.scan_s_per_byte = 2e-9;
  truth.rates.reduce_s_per_byte = 3e-9;
  const std::vector<EmulatedPoint> points = points_made_by(truth);
  auto sim = PointSimulator::prepare(points);
  ASSERT_TRUE(sim.is_ok());
  const SimulateAll simulate = [&](const Calibration& c) { return sim.value()->simulated_us(c); };

  auto fit = fit_calibration(points, simulate, Calibration{});
  ASSERT_TRUE(fit.is_ok()) << fit.status().message();
  EXPECT_EQ(fit.value().points, points.size());
  EXPECT_NEAR(fit.value().calibration.bandwidth_factor, 0.9, 0.01);
  EXPECT_NEAR(fit.value().calibration.rates.scan_s_per_byte, 2e-9, 0.3e-9);
  EXPECT_NEAR(fit.value().calibration.rates.reduce_s_per_byte, 3e-9, 0.5e-9);
  EXPECT_LT(fit.value().rms_log_error, 0.01);
  // No point had link delay, none lost packets: the latency and incast
  // factors stay, and say why.
  EXPECT_EQ(fit.value().calibration.latency_factor, 1.0);
  EXPECT_EQ(fit.value().calibration.incast_factor, 1.0);
  ASSERT_EQ(fit.value().kept.size(), 2u);

  // Not searching (no rounds) leaves the start's error: the fit did the work.
  auto idle = fit_calibration(points, simulate, Calibration{}, 0);
  ASSERT_TRUE(idle.is_ok());
  EXPECT_GT(idle.value().rms_log_error, 0.05);

  // Starved points are left out; all starved is nothing to fit.
  std::vector<EmulatedPoint> starved = points;
  for (auto& p : starved) p.wait_share = 0.5;
  EXPECT_EQ(fit_calibration(starved, simulate, Calibration{}).status().code(), Code::kUsage);
}

// Where some points' links lost packets, the incast factor is fitted to
// every judged point (the port model slows the ports of converging senders
// whether or not they lost), the other factors to the loss-free ones.
TEST(CalibrationFit, FindsTheIncastFactorFromTheLossyPoints) {
  if (!simulator_available()) GTEST_SKIP() << "this build lacks SimGrid";
  Calibration truth;
  truth.bandwidth_factor = 0.9;
  truth.incast_factor = 0.8;
  truth.rates.reduce_s_per_byte = 3e-9;
  const std::vector<EmulatedPoint> points = points_made_by(truth, true);
  auto sim = PointSimulator::prepare(points);
  ASSERT_TRUE(sim.is_ok());
  const SimulateAll simulate = [&](const Calibration& c) { return sim.value()->simulated_us(c); };
  auto fit = fit_calibration(points, simulate, Calibration{});
  ASSERT_TRUE(fit.is_ok()) << fit.status().message();
  EXPECT_EQ(fit.value().lossy_points, 4u);
  EXPECT_EQ(fit.value().points, points.size() - 4);
  EXPECT_NEAR(fit.value().calibration.incast_factor, 0.8, 0.02);
  EXPECT_NEAR(fit.value().calibration.bandwidth_factor, 0.9, 0.01);
  EXPECT_NEAR(fit.value().calibration.rates.reduce_s_per_byte, 3e-9, 0.5e-9);
}

// A point whose TCP retransmitted 1% of its links' bytes or more lost
// packets (incast): judged, but summarized apart, and fitted only for the
// incast factor.
TEST(Validation, SetsLossyPointsApart) {
  std::vector<EmulatedPoint> points;
  for (int i = 0; i < 4; ++i) points.push_back(point(100, 0.01));
  points[3].link_bytes_per_call = 1e6;
  points[3].retransmits_per_call = 6.0;  // 8.7 kB: 0.9%, not lossy
  EXPECT_FALSE(points[3].lossy());
  points[3].retransmits_per_call = 7.0;  // 10.1 kB: 1%
  EXPECT_TRUE(points[3].lossy());
  std::vector<ValidationRow> rows;
  for (const auto& p : points) rows.push_back({&p, 101});
  rows[3].simulated_us = 70;
  const ValidationBound bound;
  const ValidationSummary all = summarize_validation(rows, bound);
  EXPECT_EQ(all.judged, 4u);
  EXPECT_FALSE(all.holds(bound));
  const ValidationSummary clean = summarize_validation(rows, bound, true);
  EXPECT_EQ(clean.judged, 3u);
  EXPECT_TRUE(clean.holds(bound));
}

TEST(CalibrationFit, FitsTheLatencyFactorWhenLinksHadDelay) {
  std::vector<std::string> kept;
  std::vector<EmulatedPoint> points{point(100, 0.0)};
  EXPECT_EQ(fit_parameters(points, kept).size(), 3u);
  points[0].config.link_delay_ns = 1'000'000;
  kept.clear();
  const auto params = fit_parameters(points, kept);
  ASSERT_EQ(params.size(), 4u);
  EXPECT_STREQ(params.back().name, "latency_factor");
  ASSERT_EQ(kept.size(), 1u);  // the incast factor: no point lost packets
  EXPECT_NE(kept[0].find("incast_factor"), std::string::npos);

  // A lossy point adds the incast factor, judged on lossy points too.
  points[0].link_bytes_per_call = 1e6;
  points[0].retransmits_per_call = 100;
  kept.clear();
  const auto with_loss = fit_parameters(points, kept);
  ASSERT_EQ(with_loss.size(), 5u);
  EXPECT_STREQ(with_loss.back().name, "incast_factor");
  EXPECT_TRUE(with_loss.back().lossy_points_too);
  EXPECT_TRUE(kept.empty());
}

}  // namespace
}  // namespace omnib
