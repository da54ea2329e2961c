#include "tools/simulate/point_simulator.h"

#include <map>

#include "tools/simulate/simulation_plan.h"

namespace omnib {

struct PointSimulator::Configuration {
  RunConfig config;
  SimulationPlan plan;
  SimulationInputs inputs;
  std::vector<std::pair<size_t, std::string>> points;  // (index, algorithm)
};

PointSimulator::~PointSimulator() = default;

Result<std::unique_ptr<PointSimulator>> PointSimulator::prepare(const std::vector<EmulatedPoint>& points) {
  std::unique_ptr<PointSimulator> s(new PointSimulator());
  s->points_ = points.size();
  std::map<std::string, size_t> by_key;
  for (size_t i = 0; i < points.size(); ++i) {
    const std::string key = points[i].config.key_text();
    auto [at, added] = by_key.emplace(key, s->configurations_.size());
    if (added) {
      auto c = std::make_unique<Configuration>();
      c->config = points[i].config;
      s->configurations_.push_back(std::move(c));
    }
    s->configurations_[at->second]->points.emplace_back(i, points[i].algo);
  }
  for (auto& c : s->configurations_) {
    std::vector<std::string> algos;
    for (const auto& [index, algo] : c->points) algos.push_back(algo);
    auto plan = plan_for_emulated(c->config, algos);
    if (!plan.is_ok()) return plan.status();
    c->plan = plan.take();
    c->config = c->plan.run.config(0);  // the simulated identity: net "simulate", the star
    auto inputs = plan_inputs(c->plan, c->config);
    if (!inputs.is_ok()) return inputs.status();
    c->inputs = inputs.take();
  }
  return s;
}

Result<std::vector<ResultRecord>> PointSimulator::simulate(const Calibration& calibration) {
  std::vector<ResultRecord> records(points_);
  for (auto& c : configurations_) {
    c->plan.calibration = calibration;
    for (const auto& [index, algo] : c->points) {
      auto r = simulate_algorithm(c->plan, c->config, c->inputs, algo);
      if (!r.is_ok()) return r.status();
      records[index] = r.take();
    }
  }
  return records;
}

Result<std::vector<double>> PointSimulator::simulated_us(const Calibration& calibration) {
  auto records = simulate(calibration);
  if (!records.is_ok()) return records.status();
  std::vector<double> us;
  for (const auto& r : records.value()) us.push_back(r.time_us.median);
  return us;
}

size_t PointSimulator::configurations() const { return configurations_.size(); }

}  // namespace omnib
