// The omni-bench command line: parses argv and runs the subcommand. main()
// is this call; a build that links more algorithms (the test suite's
// sabotage build) calls it too.
#pragma once

namespace omnib {

// Returns the process exit code (docs/exit-codes.md). An exception that
// escapes a command, on any thread, is reported as an internal error (exit
// 1) with its message, never an abort.
int run_omni_bench(int argc, char** argv);

}  // namespace omnib
