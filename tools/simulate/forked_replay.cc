#include "tools/simulate/forked_replay.h"

#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "engine/sockets/socket_util.h"
#include "tools/process/child_process.h"

namespace omnib {
namespace {

// What the child sends: its outcome, or its status.
struct Report {
  int code = 0;  // Code of the status; 0: ok
  ReplayOutcome outcome;
  char message[1024] = {};
};

[[noreturn]] void child(int fd, const MessageSchedule& schedule, const PlatformSpec& platform,
                        const Calibration& calibration) {
  Report report;
  try {
    Result<ReplayOutcome> r = replay_schedule(schedule, platform, calibration);
    if (r.is_ok()) {
      report.outcome = r.value();
    } else {
      report.code = static_cast<int>(r.status().code());
      std::snprintf(report.message, sizeof(report.message), "%s", r.status().message().c_str());
    }
  } catch (const std::exception& e) {
    report.code = static_cast<int>(Code::kInternal);
    std::snprintf(report.message, sizeof(report.message), "simulation: %s", e.what());
  }
  // The parent reads until it has the whole report or gives up.
  const Status sent = write_all(fd, &report, sizeof(report), SteadyClock::time_point::max(), "the parent");
  std::fflush(nullptr);
  ::_exit(sent.is_ok() ? 0 : 1);
}

}  // namespace

Result<ReplayOutcome> replay_in_child(const MessageSchedule& schedule, const PlatformSpec& platform,
                                      const Calibration& calibration, std::chrono::seconds limit) {
  int fds[2];
  // A socket pair, not a pipe: the deadline-taking reads and writes of
  // engine/sockets are socket calls.
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    return internal_error(std::string("simulation: socketpair: ") + std::strerror(errno));
  std::fflush(nullptr);  // the child must not write the parent's buffered output again
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return internal_error(std::string("simulation: fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    child(fds[1], schedule, platform, calibration);
  }
  ::close(fds[1]);
  Report report;
  const Status got = read_all(fds[0], &report, sizeof(report), SteadyClock::now() + limit, "the simulating child");
  ::close(fds[0]);
  if (got.code() == Code::kTimeout) ::kill(pid, SIGKILL);
  const int exit = wait_child(pid);
  if (got.code() == Code::kTimeout)
    return timeout_error("simulation: one algorithm at one point ran past " + std::to_string(limit.count()) +
                         " s and was stopped: raise --point-timeout, or lower --paced-lanes or --concurrent-flows");
  if (!got.is_ok())
    return internal_error("simulation: the simulating child ended without a result (exit " + std::to_string(exit) +
                          "; out of memory?)");
  if (report.code != 0) return Status(static_cast<Code>(report.code), report.message);
  return report.outcome;
}

}  // namespace omnib
