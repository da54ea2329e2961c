#include "tools/simulate/simulate_command.h"

#include <chrono>
#include <cstdio>
#include <memory>

#include "tools/allreduce/run_plan.h"
#include "tools/common/atomic_file.h"
#include "tools/config/link_shape.h"
#include "tools/record/environment_info.h"
#include "tools/record/record_speedups.h"
#include "tools/report/json_reporter.h"
#include "tools/report/table_reporter.h"
#include "tools/schedule/schedule_catalog.h"
#include "tools/simulate/calibration.h"
#include "tools/simulate/forked_replay.h"
#include "tools/simulate/simulated_record.h"

namespace omnib {
namespace {

int failure(const Status& s) {
  std::fprintf(stderr, "omni-bench simulate: %s\n", s.message().c_str());
  return exit_code(s.code());
}

// Everything checked before the first point: the run as allreduce would
// plan it (on no network of its own) and the platform.
struct SimulationPlan {
  RunPlan run;
  PlatformSpec platform;
  Calibration calibration;
  FlowLimits flows;
};

Result<SimulationPlan> plan_simulation(const SimulateOptions& o) {
  if (o.run.net.mode_text != "loopback")
    return usage_error("--net has no meaning here: the network is simulated (--topology, --link-rate, --link-delay)");
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
  p.run.base.net = "simulate";
  p.run.base.link_rate_bps = p.platform.link_rate_bps;
  p.run.base.link_delay_ns = static_cast<uint64_t>(delay.value().count());
  p.run.base.topology = p.platform.text();
  return p;
}

RunContext context_of(const SimulationPlan& p, const std::vector<std::string>& argv) {
  RunContext ctx;
  std::vector<std::string> shown = argv;
  if (!shown.empty()) shown[0] = "omni-bench";
  for (const std::string& a : shown) ctx.command_line += (ctx.command_line.empty() ? "" : " ") + a;
  ctx.configuration = p.run.describe();
  ctx.configuration["net"] = "simulate";
  ctx.configuration["simulation"] = {{"topology", p.platform.text()},
                                     {"link_rate", format_link_rate(p.platform.link_rate_bps)},
                                     {"link_rate_bps", p.platform.link_rate_bps},
                                     {"latency_us", p.platform.latency_s * 1e6},
                                     {"concurrent_flows", p.flows.concurrent_flow_budget},
                                     {"paced_lanes", p.flows.paced_lanes},
                                     {"calibration", calibration_to_json(p.calibration)},
                                     {"calibration_file", p.calibration.path}};
  ctx.environment = build_environment();
  ctx.environment["simulator"] = simulator_version();
  ctx.environment["ranks"] = p.run.world();
  ctx.environment["nodes"] = p.run.base.nodes;
  ctx.environment["aggregators"] = p.run.base.aggregators;
  ctx.environment["launcher"] = "simulate";
  // Where the simulation ran; its ranks are simulated hosts, none of them real.
  ctx.environment["hosts"] = nlohmann::json::array({host_name()});
  ctx.environment["rendezvous"] = "none (simulated)";
  return ctx;
}

// Every algorithm of one configuration.
Result<std::vector<ResultRecord>> simulate_configuration(const SimulationPlan& p, const RunConfig& config) {
  auto workload = make_workload(p.run.workload);
  if (!workload.is_ok()) return workload.status();
  const SimulationInputs inputs = generate_simulation_inputs(*workload.value(), config);
  std::vector<ResultRecord> group;
  for (const std::string& algo : p.run.algos) {
    const ScheduleBuilder* build = find_schedule(algo);
    if (build == nullptr) {
      group.push_back(unscheduled_record(algo, config, inputs.stats));
      continue;
    }
    const auto start = std::chrono::steady_clock::now();
    const MessageSchedule schedule = (*build)(ScheduleInputs{inputs.cost, p.calibration.rates, p.flows});
    auto outcome = replay_in_child(schedule, p.platform, p.calibration);
    if (!outcome.is_ok()) return outcome.status().with_context(algo + ", " + config.label() + ": ");
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    group.push_back(simulated_record(algo, SimulatedPoint{config, inputs, schedule, outcome.value(), wall}));
  }
  compute_speedups(group);
  return group;
}

}  // namespace

int run_simulate_command(const SimulateOptions& options, const std::vector<std::string>& argv) {
  if (!simulator_available())
    return failure(unavailable_error(
        "this build of omni-bench lacks SimGrid: install libsimgrid-dev (ci/setup.sh does), configure again "
        "and rebuild (docs/simulation.md)"));
  auto planned = plan_simulation(options);
  if (!planned.is_ok()) return failure(planned.status());
  const SimulationPlan& p = planned.value();
  if (!p.run.json_path.empty()) {
    Status s = check_output_path(p.run.json_path, p.run.force, "--force to replace it");
    if (!s.is_ok()) return failure(s);
  }
  std::vector<std::unique_ptr<Reporter>> reporters;
  reporters.push_back(std::make_unique<TableReporter>(stdout, options.run.wide));
  if (!p.run.json_path.empty()) reporters.push_back(std::make_unique<JsonReporter>(p.run.json_path));
  const RunContext ctx = context_of(p, argv);
  for (auto& r : reporters)
    if (Status s = r->begin(ctx); !s.is_ok()) return failure(s);
  for (size_t k = 0; k < p.run.sizes.size(); ++k) {
    auto group = simulate_configuration(p, p.run.config(k));
    if (!group.is_ok()) return failure(group.status());
    for (auto& r : reporters)
      if (Status s = r->add_group(group.value()); !s.is_ok()) return failure(s);
  }
  for (auto& r : reporters)
    if (Status s = r->finish(); !s.is_ok()) return failure(s);
  return 0;
}

}  // namespace omnib
