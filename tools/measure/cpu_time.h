// CPU time of this process (every thread: the collective's lanes, its
// transport, the kernel's network work charged to it), read with getrusage,
// and its CPU wait: how long its threads were runnable but not running,
// summed over its threads (the kernel's schedstat run delay). Load on the
// machine moves CPU time far less than wall-clock time, so a gate can judge
// CPU per wire byte even on a busy runner; the wait says when the host, not
// the network, set a call's time. Where the kernel gives no schedstat, the
// involuntary context switches (preemptions, from getrusage) are what
// remains of the wait: a count, not a time. With the transport's CPU
// accounting on (--profile), the part of it the transport took
// (engine/transport/transport_cpu.h).
#pragma once

namespace omnib {

struct CpuTime {
  double user_us = 0;
  double sys_us = 0;
  double wait_us = 0;  // run delay over every thread; 0 where schedstat is missing
  double preemptions = 0;  // involuntary context switches of the process
  double transport_us = 0;  // of user + sys, the transport's; 0 unless accounted
  double total_us() const { return user_us + sys_us; }
  CpuTime operator-(const CpuTime& o) const {
    return {user_us - o.user_us, sys_us - o.sys_us, wait_us - o.wait_us, preemptions - o.preemptions,
            transport_us - o.transport_us};
  }
  CpuTime& operator+=(const CpuTime& o) {
    user_us += o.user_us;
    sys_us += o.sys_us;
    wait_us += o.wait_us;
    preemptions += o.preemptions;
    transport_us += o.transport_us;
    return *this;
  }
};

// Reading the run delays costs CPU (a file per thread): before a call they
// are read first and the CPU time last, after it the other way round, so
// that neither reading falls between the two CPU times. kCpuOnly: no wait
// (left 0), for a caller that reads often.
enum class CpuReading { kBeforeCall, kAfterCall, kCpuOnly };
CpuTime process_cpu_time(CpuReading when);

// Whether this kernel reports run delays (/proc/self/task/*/schedstat).
bool cpu_wait_measured();

}  // namespace omnib
