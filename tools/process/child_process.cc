#include "tools/process/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace omnib {

Result<pid_t> start_child(const ChildSpec& spec) {
  if (spec.argv.empty()) return internal_error("start_child: empty command");
  // Everything the child needs is built before fork: the child of a threaded
  // process must not allocate.
  std::vector<char*> args;
  for (const auto& a : spec.argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const bool search_path = spec.argv[0].find('/') == std::string::npos;
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) return internal_error("fork for '" + spec.argv[0] + "': " + std::strerror(errno));
  if (pid > 0) return pid;

  if (spec.die_with_parent) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(128 + SIGKILL);  // the parent died before prctl
  }
  if (spec.own_process_group) setpgid(0, 0);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGCHLD}) signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  if (spec.discard_output) {
    const int null_fd = open("/dev/null", O_WRONLY);
    if (null_fd >= 0) {
      dup2(null_fd, STDOUT_FILENO);
      dup2(null_fd, STDERR_FILENO);
      close(null_fd);
    }
  }
  for (const auto& [name, value] : spec.env) setenv(name.c_str(), value.c_str(), 1);
  if (search_path)
    execvp(args[0], args.data());
  else
    execv(args[0], args.data());
  _exit(127);
}

int wait_child(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return 1;
  return exit_code_of(status);
}

int run_child(const ChildSpec& spec) {
  auto pid = start_child(spec);
  if (!pid.is_ok()) return 127;
  return wait_child(pid.value());
}

int exit_code_of(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

}  // namespace omnib
