// Option values that parse but mean nothing, refused after CLI11 has read the
// command line: an empty value (`--duration ""` would otherwise read as the
// option left out), NaN or infinity for a number (NaN fails every
// comparison, so a check such as --min-busbw would silently check nothing),
// and integers past their type's range or, for unsigned options, negative
// (CLI11 saturates `--seed 18446744073709551616` to 2^64-1 and wraps
// `--seed -1` to it).
#pragma once

#include <CLI/CLI.hpp>

#include "engine/status.h"

namespace omnib {

// A usage error naming the first such value of `app` or of a subcommand that
// was used; flags are not looked at.
Status check_option_values(const CLI::App& app);

}  // namespace omnib
