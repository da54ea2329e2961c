// `omni-bench net cleanup [--all]`: removes emulated clusters left behind by
// runs that died without tearing theirs down (a SIGKILLed launcher).
#pragma once

#include <CLI/CLI.hpp>

namespace omnib {

struct NetCommandOptions {
  bool all = false;  // also clusters whose owner pid exists (it may be a reused pid)
  CLI::App* cleanup = nullptr;
};

// Declares `net` and its subcommands on `app`; returns the `net` command.
CLI::App* add_net_command(CLI::App& app, NetCommandOptions& options);

// Runs the chosen subcommand; returns the process exit code.
int run_net_command(const NetCommandOptions& options);

}  // namespace omnib
