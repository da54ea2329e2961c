#include "tools/simulate/simulate_options.h"

namespace omnib {

void bind_simulate_options(CLI::App& cmd, SimulateOptions& o) {
  bind_allreduce_options(cmd, o.run);
  cmd.add_option("--topology", o.topology_text,
                 "the simulated network: star (one link per host to a switch, as --net emulate), fat-tree "
                 "(two levels, leaves of 32 hosts, full bisection), fat-tree:K (leaves of K hosts), "
                 "fat-tree:L;D;U;C (SimGrid's), torus:X,Y,...")
      ->capture_default_str()
      ->group("Simulation");
  cmd.add_option("--calibration", o.calibration_path,
                 "the network model's factors (bandwidth, latency, and the share of its rate a port keeps when TCP "
                 "senders converge on it) and the compute rates, fitted to emulated runs (docs/simulation.md); "
                 "without it the links are taken as given and compute is free")
      ->group("Simulation");
  cmd.add_option("--concurrent-flows", o.concurrent_flows,
                 "flows in flight past which a rank's fan-out to its peers is paced, one after another at line "
                 "rate (what keeps 1024 ranks in minutes; docs/simulation.md)")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40))
      ->group("Simulation");
  cmd.add_option("--paced-lanes", o.paced_lanes,
                 "flows of a paced fan-out moving bytes at once: more fill the links better when receivers are "
                 "busy, and cost the simulation far more time (docs/simulation.md)")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1}, size_t{64}))
      ->group("Simulation");
  cmd.add_option("--point-timeout", o.point_timeout_s,
                 "seconds one algorithm's simulation at one point may take before the command fails (the simulating "
                 "process is stopped)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{7} * 24 * 3600))
      ->group("Simulation");
  cmd.add_option("--against", o.against,
                 "results of --net emulate runs (comma list): simulate each measured configuration on the star its "
                 "links made and print simulated against measured, with the points whose ranks waited for CPUs "
                 "apart (docs/simulation.md)")
      ->group("Validation");
  cmd.add_option("--calibrate", o.calibrate_path,
                 "fit a calibration to emulated runs and write it here: to --against's results, or to a small "
                 "emulated sweep it runs first (as root; about 10 minutes)")
      ->group("Validation");
}

}  // namespace omnib
