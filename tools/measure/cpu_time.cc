#include "tools/measure/cpu_time.h"

#include <sys/resource.h>

namespace omnib {
namespace {

double micros(const timeval& t) { return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_usec); }

}  // namespace

CpuTime process_cpu_time() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return {micros(u.ru_utime), micros(u.ru_stime)};
}

}  // namespace omnib
