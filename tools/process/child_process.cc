#include "tools/process/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

extern char** environ;

namespace omnib {

namespace {

void close_all(std::initializer_list<int> fds) {
  for (int fd : fds)
    if (fd >= 0) close(fd);
}

// The child's environment: this process's, with spec.env's names replaced.
// Built before fork: the child of a threaded process must not allocate.
std::vector<std::string> child_environment(const ChildSpec& spec) {
  std::vector<std::string> entries;
  for (char** e = environ; *e; ++e) {
    const std::string entry(*e);
    const std::string name = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const auto& [n, v] : spec.env) replaced |= n == name;
    if (!replaced) entries.push_back(entry);
  }
  for (const auto& [name, value] : spec.env) entries.push_back(name + "=" + value);
  return entries;
}

// In the child, between fork and exec: only async-signal-safe calls.
[[noreturn]] void become_child(const ChildSpec& spec, pid_t parent, const int out_pipe[2], const int err_pipe[2],
                               char* const* args, char* const* envp) {
  if (spec.die_with_parent) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(128 + SIGKILL);  // the parent died before prctl
  }
  if (spec.own_process_group) setpgid(0, 0);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGCHLD}) signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  if (spec.capture_output) {
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
  } else if (spec.discard_output) {
    const int null_fd = open("/dev/null", O_WRONLY);
    if (null_fd >= 0) {
      dup2(null_fd, STDOUT_FILENO);
      dup2(null_fd, STDERR_FILENO);
      close(null_fd);
    }
  }
  if (spec.argv[0].find('/') == std::string::npos)
    execvpe(args[0], args, envp);
  else
    execve(args[0], args, envp);
  if (!spec.exec_failure_message.empty()) {
    // write(2) only: the child of a threaded process must not take locks.
    const char* reason = strerror(errno);
    [[maybe_unused]] ssize_t n = write(STDERR_FILENO, spec.exec_failure_message.data(), spec.exec_failure_message.size());
    n = write(STDERR_FILENO, reason, std::strlen(reason));
    n = write(STDERR_FILENO, "\n", 1);
  }
  _exit(spec.exec_failure_code);
}

}  // namespace

Result<Child> start_child(const ChildSpec& spec) {
  if (spec.argv.empty()) return internal_error("start_child: empty command");
  int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  if (spec.capture_output && (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0)) {
    const int err = errno;
    close_all({out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]});
    return internal_error(std::string("pipe: ") + std::strerror(err));
  }
  std::vector<char*> args;
  for (const auto& a : spec.argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_entries = child_environment(spec);
  std::vector<char*> envp;
  for (auto& e : env_entries) envp.push_back(e.data());
  envp.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) become_child(spec, parent, out_pipe, err_pipe, args.data(), envp.data());
  if (pid < 0) {
    const int err = errno;
    close_all({out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]});
    return internal_error("fork for '" + spec.argv[0] + "': " + std::strerror(err));
  }
  // Also here: a kill of the group must not race the child's own setpgid.
  if (spec.own_process_group) setpgid(pid, pid);
  if (spec.capture_output) close_all({out_pipe[1], err_pipe[1]});
  return Child{pid, out_pipe[0], err_pipe[0]};
}

int wait_child(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return 1;
  return exit_code_of(status);
}

int run_child(const ChildSpec& spec) {
  auto child = start_child(spec);
  if (!child.is_ok()) return 127;
  return wait_child(child.value().pid);
}

int exit_code_of(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

}  // namespace omnib
