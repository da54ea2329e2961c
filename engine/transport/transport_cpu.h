// The CPU this process's transport takes: its network thread whole (the TCP
// IoLoop's, or a fabric endpoint's progress thread), and the transport work
// lanes do on their own threads (a TCP write made as a frame is posted, a
// fabric frame started or credit sent by the lane, a payload copied into a
// send buffer), so that --profile can say what moving a byte costs over
// each transport and provider. Kernel work an interrupt charges to another
// thread is not the transport's here.
//
// The lanes' part costs two thread-clock reads (system calls) per piece of
// work, so it is counted only while accounting is on (--profile); the
// network threads' clocks are read only when asked.
#pragma once

#include <cstdint>

namespace omnib {

void set_transport_cpu_accounting(bool on);
bool transport_cpu_accounting();

// Called by a network thread on itself: when it starts, and before it ends
// (its CPU then stays counted).
void register_network_thread();
void retire_network_thread();

// A lane's transport work, from construction to destruction (counted only
// while accounting is on).
class TransportWork {
 public:
  TransportWork();
  ~TransportWork();
  TransportWork(const TransportWork&) = delete;
  TransportWork& operator=(const TransportWork&) = delete;

 private:
  int64_t start_ns_ = -1;  // -1: not counted
};

// Nanoseconds of CPU the transport took in this process so far.
uint64_t transport_cpu_ns();

}  // namespace omnib
