#include "tools/net/command_runner.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <thread>

#include "tools/process/child_process.h"

namespace omnib {
namespace {

std::string join(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

using Clock = std::chrono::steady_clock;

int ms_left(Clock::time_point deadline) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<int64_t>(left, 0, std::numeric_limits<int>::max()));
}

// Reads both pipes to their ends without letting either fill up, until the
// deadline. Closes both. False when the deadline came first.
bool drain(int out_fd, int err_fd, std::string& out, std::string& err, Clock::time_point deadline) {
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  std::string* sinks[2] = {&out, &err};
  int open_fds = 2;
  char buf[4096];
  while (open_fds > 0) {
    const int left = ms_left(deadline);
    if (left == 0) break;
    if (poll(fds, 2, left) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = read(fds[i].fd, buf, sizeof(buf));
      if (n > 0) {
        sinks[i]->append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (const pollfd& p : fds)
    if (p.fd >= 0) close(p.fd);
  return open_fds == 0;
}

// Waits for the child until the deadline; false when it is still running.
// A child reaped elsewhere (SIGCHLD ignored) leaves `status` 0.
bool reap(pid_t pid, Clock::time_point deadline, int& status) {
  constexpr auto kPollInterval = std::chrono::milliseconds(2);
  while (true) {
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(kPollInterval);
  }
}

}  // namespace

std::string find_tool(const std::string& name) {
  if (name.empty() || name.find('/') != std::string::npos) return "";
  for (const char* dir : kToolFolders) {
    const std::string candidate = std::string(dir) + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

Result<CommandOutput> run_command(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  const std::string tool = argv[0].find('/') == std::string::npos ? find_tool(argv[0]) : argv[0];
  if (tool.empty())
    return unavailable_error("'" + argv[0] + "' was not found in /usr/sbin, /sbin, /usr/bin or /bin: install "
                             "iproute2 (it provides ip and tc)");
  ChildSpec spec;
  spec.argv = argv;
  spec.argv[0] = tool;
  spec.capture_output = true;
  spec.own_process_group = true;  // so that a kill reaches the tool's own children
  auto started = start_child(spec);
  if (!started.is_ok()) return started.status().with_context("'" + join(argv) + "': ");
  const pid_t pid = started.value().pid;
  CommandOutput result;
  int status = 0;
  const bool drained = drain(started.value().out_fd, started.value().err_fd, result.out, result.err, deadline);
  if (!drained || !reap(pid, deadline, status)) {
    // Its whole group: a tool's own children would otherwise hold the pipes.
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    (void)reap(pid, Clock::now() + std::chrono::seconds(2), status);
    char limit[32];
    std::snprintf(limit, sizeof limit, "%.3g s", std::chrono::duration<double>(timeout).count());
    return timeout_error("'" + join(argv) + "' did not finish within " + limit +
                         " and was killed (is the machine overloaded, or the tool stuck?)");
  }
  result.exit_code = exit_code_of(status);
  return result;
}

bool says_permission_denied(const std::string& err) {
  return err.find("Operation not permitted") != std::string::npos ||
         err.find("Permission denied") != std::string::npos;
}

Status run_checked(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  auto r = run_command(argv, timeout);
  if (!r.is_ok()) return r.status();
  const CommandOutput& c = r.value();
  if (c.exit_code == 0) return Status::ok();
  if (c.exit_code == 127 && c.err.empty())
    return unavailable_error("could not start '" + argv[0] + "': install iproute2 (it provides ip and tc)");
  if (says_permission_denied(c.err))
    return unavailable_error("'" + join(argv) + "' was refused (" + trimmed(c.err) +
                             "): network emulation needs root, or CAP_NET_ADMIN and CAP_SYS_ADMIN");
  return unavailable_error("'" + join(argv) + "' failed (exit " + std::to_string(c.exit_code) +
                           "): " + trimmed(c.err));
}

}  // namespace omnib
