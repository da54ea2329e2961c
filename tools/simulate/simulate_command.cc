#include "tools/simulate/simulate_command.h"

#include <cstdio>
#include <memory>

#include "tools/common/atomic_file.h"
#include "tools/config/link_shape.h"
#include "tools/record/environment_info.h"
#include "tools/report/json_reporter.h"
#include "tools/report/table_reporter.h"
#include "tools/simulate/replay.h"
#include "tools/simulate/simulate_against.h"
#include "tools/simulate/simulation_plan.h"

namespace omnib {
namespace {

int failure(const Status& s) {
  std::fprintf(stderr, "omni-bench simulate: %s\n", s.message().c_str());
  return exit_code(s.code());
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

}  // namespace

int run_simulate_command(const SimulateOptions& options, const std::vector<std::string>& argv) {
  if (!simulator_available())
    return failure(unavailable_error(
        "this build of omni-bench lacks SimGrid: install libsimgrid-dev (ci/setup.sh does), configure again "
        "and rebuild (docs/simulation.md)"));
  if (!options.against.empty() || !options.calibrate_path.empty()) return run_simulate_against(options, argv);
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
