#include "tools/cli/introduction.h"

#include <CLI/CLI.hpp>

#include "tools/build_info.h"

namespace omnib {

const std::vector<StartingCommand>& starting_commands() {
  static const std::vector<StartingCommand> commands = {
      {{"allreduce --density 0.1"},
       "a quick run: 4 ranks here, the engine against the strongest baselines, every result checked"},
      {{"sweep --density 0.001,0.01,0.1 --algo omni,ring,allgather --sizes 1M -J sweep.json",
        "plot sweep.json -o figures/"},
       "a sweep over densities into one JSON file, then its figures (PNG and SVG)"},
      {{"compare baseline.json current.json"},
       "the CI gate: exit 5 when the current run regressed (docs/ci-gate.md, ci/perf_gate.sh)"},
  };
  return commands;
}

void print_introduction(const CLI::App& app, std::FILE* out) {
  std::fprintf(out,
               "omni-bench %s: a block-sparse allreduce engine (OmniReduce-style: only non-zero blocks cross the\n"
               "network) and a head-to-head collective benchmark in the style of nccl-tests: the engine against\n"
               "dense and sparse baselines on the same inputs, every result checked, a table and JSON.\n\n"
               "Start with:\n",
               OMNIB_VERSION);
  for (const auto& c : starting_commands()) {
    for (const auto& line : c.lines) std::fprintf(out, "  omni-bench %s\n", line.c_str());
    std::fprintf(out, "      %s\n", c.what.c_str());
  }
  std::fprintf(out, "\nCommands:\n");
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    std::fprintf(out, "  %-10s %s\n", sub->get_name().c_str(), sub->get_description().c_str());
  std::fprintf(out, "\n`omni-bench COMMAND --help` lists a command's options; README.md and docs/ say the rest.\n");
}

}  // namespace omnib
