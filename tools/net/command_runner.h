// Runs the iproute2 tools (ip, tc) as child processes and turns their failures
// into Status values that carry the command line and what the tool said.
#pragma once

#include <string>
#include <vector>

#include "engine/status.h"

namespace omnib {

struct CommandOutput {
  int exit_code = -1;  // 128+N when killed by signal N
  std::string out;
  std::string err;
};

// Runs argv (argv[0] searched on PATH) and waits for it. Blocks. The child gets
// its own process group, so a Ctrl-C on the terminal does not cut a set-up or
// tear-down step short; the caller decides when to stop. Fails only when the
// command cannot be started (kUnavailable names the missing tool).
Result<CommandOutput> run_command(const std::vector<std::string>& argv);

// Runs argv and fails when it exits non-zero. A permission failure becomes
// kUnavailable with what to do about it; anything else kUnavailable with the
// command and its stderr.
Status run_checked(const std::vector<std::string>& argv);

// True when a tool's stderr says the caller lacks the privilege.
bool says_permission_denied(const std::string& err);

// The full path of a tool on PATH (also /sbin and /usr/sbin, where iproute2
// lives but which a non-root PATH often lacks); empty when absent.
std::string find_tool(const std::string& name);

}  // namespace omnib
