// Starting a child process and turning how it ended into our exit codes: the
// one place that forks, execs and reads a wait status. A child killed by a
// signal reports 128 + the signal number, as shells do (docs/exit-codes.md).
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

#include "engine/base/status.h"

namespace omnib {

struct ChildSpec {
  // argv[0] is a path (it holds a '/'), or a name looked up on PATH.
  std::vector<std::string> argv;
  // Added to (or replacing in) the child's environment.
  std::vector<std::pair<std::string, std::string>> env;
  bool discard_output = false;   // stdout and stderr to /dev/null
  bool capture_output = false;   // stdout and stderr to pipes the caller reads (Child::out_fd, err_fd)
  bool die_with_parent = false;  // SIGKILL the child when this process dies
  bool own_process_group = false;  // so that a signal to it reaches everything it starts
  // When the program cannot be executed: the child exits with this code,
  // after writing `exec_failure_message`, then the reason, to its stderr (when set).
  int exec_failure_code = 127;
  std::string exec_failure_message;
};

struct Child {
  pid_t pid = -1;
  int out_fd = -1;  // with capture_output: the read ends, owned by the caller
  int err_fd = -1;
};

// Starts the child. Its signal dispositions and mask are reset to the
// defaults (a parent's handlers must not leak into it); exec_failure_code is
// its exit code when the program cannot be executed.
Result<Child> start_child(const ChildSpec& spec);

// Waits for `pid` (retrying on EINTR) and returns exit_code_of its status.
int wait_child(pid_t pid);

// start_child then wait_child; 127 when the child could not be started.
int run_child(const ChildSpec& spec);

// Our exit code for a wait status: the child's own exit code, or 128 + the
// signal that killed it.
int exit_code_of(int wait_status);

}  // namespace omnib
