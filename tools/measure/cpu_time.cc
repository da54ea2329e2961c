#include "tools/measure/cpu_time.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "engine/transport/transport_cpu.h"

namespace omnib {
namespace {

double micros(const timeval& t) { return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_usec); }

// The second field of a thread's schedstat: nanoseconds spent runnable on a
// run queue, waiting for a CPU. -1 when the file cannot be read.
double thread_run_delay_ns(int task_dir, const char* tid) {
  const std::string path = std::string(tid) + "/schedstat";
  const int fd = openat(task_dir, path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[128];
  const ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return -1;
  buf[n] = '\0';
  char* end = nullptr;
  std::strtoull(buf, &end, 10);  // time on a CPU
  const char* delay = end;
  const unsigned long long ns = std::strtoull(delay, &end, 10);
  return end == delay ? -1 : static_cast<double>(ns);
}

// Run delay summed over the process's threads now alive (a thread that
// ended takes its delay with it: the lanes live as long as the collective).
double run_delay_us() {
  DIR* tasks = opendir("/proc/self/task");
  if (!tasks) return 0;
  double ns = 0;
  while (const dirent* e = readdir(tasks)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    const double d = thread_run_delay_ns(dirfd(tasks), e->d_name);
    if (d > 0) ns += d;
  }
  closedir(tasks);
  return ns / 1e3;
}

}  // namespace

CpuTime process_cpu_time(CpuReading when) {
  // The transport's CPU is read on the run delays' side of the CPU time.
  const bool before = when == CpuReading::kBeforeCall;
  const bool transport = transport_cpu_accounting();
  const double wait_before = before ? run_delay_us() : 0;
  const double transport_before = transport && before ? transport_cpu_ns() / 1e3 : 0;
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  const double wait = when == CpuReading::kAfterCall ? run_delay_us() : wait_before;
  const double transport_us = transport && !before ? transport_cpu_ns() / 1e3 : transport_before;
  return {micros(u.ru_utime), micros(u.ru_stime), wait, static_cast<double>(u.ru_nivcsw), transport_us};
}

bool cpu_wait_measured() {
  static const bool known = [] {
    DIR* tasks = opendir("/proc/self/task");
    if (!tasks) return false;
    const std::string self = std::to_string(gettid());
    const bool ok = thread_run_delay_ns(dirfd(tasks), self.c_str()) >= 0;
    closedir(tasks);
    return ok;
  }();
  return known;
}

}  // namespace omnib
