// Option values that parse but mean nothing, refused after CLI11 has read the
// command line: an empty value (`--duration ""` would otherwise read as the
// option left out), NaN or infinity for a number (NaN fails every
// comparison, so a check such as --min-busbw would silently check nothing),
// and integers past their type's range or, for unsigned options, negative
// (CLI11 saturates `--seed 18446744073709551616` to 2^64-1 and wraps
// `--seed -1` to it).
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "engine/base/status.h"

namespace omnib {

// A usage error naming the first such value of `app` or of a subcommand that
// was used; flags are not looked at.
Status check_option_values(const CLI::App& app);

// Parses `args` (no program name) into `options` with `bind`, exactly as the
// command that binds them would, values checked as above: what a sweep's
// point or a re-simulated measurement plans from. Usage error on a bad one.
template <typename Options, typename Bind>
Status parse_as_command(const std::vector<std::string>& args, Options& options, Bind bind) {
  CLI::App app;
  bind(app, options);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 parses a reversed vector
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    return usage_error(std::string(e.what()));
  }
  return check_option_values(app);
}

}  // namespace omnib
