#include "tools/simulate/simulation_plan.h"

#include <algorithm>
#include <chrono>

#include "tools/common/option_values.h"
#include "tools/config/link_shape.h"
#include "tools/record/record_speedups.h"
#include "tools/schedule/schedule_catalog.h"
#include "tools/simulate/forked_replay.h"
#include "tools/simulate/simulated_record.h"

namespace omnib {

Result<SimulationPlan> plan_simulation(const SimulateOptions& o) {
  if (o.run.net.mode_text != "loopback")
    return usage_error("--net has no meaning here: the network is simulated (--topology, --link-rate, --link-delay)");
  if (const CLI::Option* tcp_option = o.run.net.given_tcp_option())
    return usage_error(tcp_option->get_name() +
                       " sets the TCP of emulated ranks: a simulated flow has none (docs/simulation.md)");
  SimulationPlan p;
  AllreduceOptions run = o.run;
  run.net.rate_option = run.net.delay_option = nullptr;  // they shape the simulated links here
  auto planned = plan_allreduce(run, 1, std::nullopt);
  if (!planned.is_ok()) return planned.status();
  p.run = planned.take();
  auto topology = parse_topology(o.topology_text);
  if (!topology.is_ok()) return topology.status();
  p.platform = topology.take();
  auto rate = parse_link_rate(o.run.net.link_rate_text);
  if (!rate.is_ok()) return rate.status();
  auto delay = parse_link_delay(o.run.net.link_delay_text);
  if (!delay.is_ok()) return delay.status();
  p.platform.link_rate_bps = rate.value();
  p.platform.latency_s = static_cast<double>(delay.value().count()) * 1e-9;
  OMNIB_RETURN_IF_ERROR(fit_to_ranks(p.platform, p.run.world()));
  if (!o.calibration_path.empty()) {
    auto c = read_calibration(o.calibration_path);
    if (!c.is_ok()) return c.status();
    p.calibration = c.take();
  }
  p.flows.concurrent_flow_budget = o.concurrent_flows;
  p.flows.paced_lanes = o.paced_lanes;
  p.point_timeout = std::chrono::seconds(o.point_timeout_s);
  p.run.base.net = "simulate";
  p.run.base.link_rate_bps = p.platform.link_rate_bps;
  p.run.base.link_delay_ns = static_cast<uint64_t>(delay.value().count());
  p.run.base.topology = p.platform.text();
  return p;
}

Result<SimulationPlan> plan_for_emulated(const RunConfig& emulated, const std::vector<std::string>& algos) {
  if (emulated.net != "emulate")
    return usage_error("a " + emulated.net + " measurement (" + emulated.label() +
                       ") has no links to simulate: give results of --net emulate");
  // The configuration's own allreduce arguments, its links given to the
  // simulated star instead of to --net emulate (the ranks' TCP has no
  // counterpart in a flow model).
  RunConfig links_only = emulated;
  links_only.tcp_cc.clear();
  links_only.tcp_idle_restart.clear();
  std::vector<std::string> args;
  const std::vector<std::string> again = links_only.allreduce_args();
  for (size_t i = 0; i < again.size(); ++i) {
    if (again[i] == "--net") {
      ++i;
      continue;
    }
    args.push_back(again[i]);
  }
  std::string list;
  for (const auto& a : algos) list += (list.empty() ? "" : ",") + a;
  args.insert(args.end(), {"--algo", list});
  SimulateOptions o;
  Status parsed = parse_as_command(args, o, bind_simulate_options);
  if (!parsed.is_ok()) return parsed.with_context("cannot simulate " + emulated.label() + ": ");
  return plan_simulation(o);
}

Result<SimulationInputs> plan_inputs(const SimulationPlan& p, const RunConfig& config) {
  auto workload = make_workload(p.run.workload);
  if (!workload.is_ok()) return workload.status();
  return generate_simulation_inputs(*workload.value(), config);
}

Result<ResultRecord> simulate_algorithm(const SimulationPlan& p, const RunConfig& config,
                                        const SimulationInputs& inputs, const std::string& algo) {
  const ScheduleBuilder* build = find_schedule(algo);
  if (build == nullptr) return unscheduled_record(algo, config, inputs.stats);
  const auto start = std::chrono::steady_clock::now();
  const MessageSchedule schedule = (*build)(ScheduleInputs{inputs.cost, p.calibration.rates, p.flows});
  auto outcome = replay_in_child(schedule, p.platform, p.calibration, p.point_timeout);
  if (!outcome.is_ok()) return outcome.status().with_context(algo + ", " + config.label() + ": ");
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return simulated_record(algo, SimulatedPoint{config, inputs, schedule, outcome.value(), wall});
}

Result<std::vector<ResultRecord>> simulate_configuration(const SimulationPlan& p, const RunConfig& config) {
  auto inputs = plan_inputs(p, config);
  if (!inputs.is_ok()) return inputs.status();
  std::vector<ResultRecord> group;
  for (const std::string& algo : p.run.algos) {
    auto record = simulate_algorithm(p, config, inputs.value(), algo);
    if (!record.is_ok()) return record.status();
    group.push_back(record.take());
  }
  compute_speedups(group);
  return group;
}

}  // namespace omnib
