#include "tools/simulate/forked_replay.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "tools/process/child_process.h"

namespace omnib {
namespace {

// What the child sends: its outcome, or its status.
struct Report {
  int code = 0;  // Code of the status; 0: ok
  ReplayOutcome outcome;
  char message[1024] = {};
};

bool write_all(int fd, const void* data, size_t n) {
  const auto* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

size_t read_all(int fd, void* data, size_t n) {
  auto* p = static_cast<char*>(data);
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::read(fd, p + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  return got;
}

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
  const bool sent = write_all(fd, &report, sizeof(report));
  std::fflush(nullptr);
  ::_exit(sent ? 0 : 1);
}

}  // namespace

Result<ReplayOutcome> replay_in_child(const MessageSchedule& schedule, const PlatformSpec& platform,
                                      const Calibration& calibration) {
  int fds[2];
  if (::pipe(fds) != 0) return internal_error(std::string("simulation: pipe: ") + std::strerror(errno));
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
  const size_t got = read_all(fds[0], &report, sizeof(report));
  ::close(fds[0]);
  const int exit = wait_child(pid);
  if (got != sizeof(report))
    return internal_error("simulation: the simulating child ended without a result (exit " + std::to_string(exit) +
                          "; out of memory?)");
  if (report.code != 0) return Status(static_cast<Code>(report.code), report.message);
  return report.outcome;
}

}  // namespace omnib
