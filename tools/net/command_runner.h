// Runs the iproute2 tools (ip, tc) as child processes and turns their failures
// into Status values that carry the command line and what the tool said.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "engine/base/status.h"

namespace omnib {

struct CommandOutput {
  int exit_code = -1;  // 128+N when killed by signal N
  std::string out;
  std::string err;
};

// How long one ip or tc call may take (they normally take milliseconds; a
// busy machine deleting namespaces may take seconds).
constexpr std::chrono::milliseconds kCommandTimeout{30000};

// The folders tools are looked up in, and the only ones: omni-bench runs them
// as root, so a tool found through the caller's PATH (or a relative entry
// such as '.') would run with root's privileges.
inline constexpr const char* kToolFolders[] = {"/usr/sbin", "/sbin", "/usr/bin", "/bin"};

// Runs argv (argv[0] looked up with find_tool unless it holds a '/') and waits
// for it. Blocks at most `timeout`: a command that has not exited and closed
// its output by then is killed with its process group, and the result is
// kTimeout. The child gets its own process group, so a Ctrl-C on the terminal
// does not cut a set-up or tear-down step short; the caller decides when to
// stop. Otherwise fails only when the command cannot be started
// (kUnavailable names the missing tool).
Result<CommandOutput> run_command(const std::vector<std::string>& argv,
                                  std::chrono::milliseconds timeout = kCommandTimeout);

// Runs argv and fails when it exits non-zero. A permission failure becomes
// kUnavailable with what to do about it; anything else kUnavailable with the
// command and its stderr; a command past its timeout kTimeout.
Status run_checked(const std::vector<std::string>& argv, std::chrono::milliseconds timeout = kCommandTimeout);

// True when a tool's stderr says the caller lacks the privilege.
bool says_permission_denied(const std::string& err);

// The full path of an executable `name` in kToolFolders (never PATH); empty
// when absent.
std::string find_tool(const std::string& name);

}  // namespace omnib
