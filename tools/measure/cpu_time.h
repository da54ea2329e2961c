// CPU time of this process (every thread: the collective's lanes, its
// transport, the kernel's network work charged to it), read with getrusage.
// Load on the machine moves it far less than wall-clock time, so a gate can
// judge CPU per wire byte even on a busy runner.
#pragma once

namespace omnib {

struct CpuTime {
  double user_us = 0;
  double sys_us = 0;
  double total_us() const { return user_us + sys_us; }
  CpuTime operator-(const CpuTime& o) const { return {user_us - o.user_us, sys_us - o.sys_us}; }
  CpuTime& operator+=(const CpuTime& o) {
    user_us += o.user_us;
    sys_us += o.sys_us;
    return *this;
  }
};

CpuTime process_cpu_time();

}  // namespace omnib
