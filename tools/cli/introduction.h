// What `omni-bench` with no arguments prints: what it is, the three commands
// most people start with (a quick run, a sweep and its plot, the CI gate),
// and every subcommand, for someone who has just built it.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace omnib {

// The starting commands, each a command line (without the program name) and
// what it does; the first words of each are a subcommand of omni-bench.
struct StartingCommand {
  std::vector<std::string> lines;  // run in order, e.g. a sweep and then its plot
  std::string what;
};
const std::vector<StartingCommand>& starting_commands();

// The introduction, with `app`'s subcommands and their descriptions.
void print_introduction(const CLI::App& app, std::FILE* out);

}  // namespace omnib
