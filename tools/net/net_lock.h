// A machine-wide lock around choosing a subnet and removing leftovers, so two
// runs starting together neither take the same /24 nor tear down each other's
// half-built cluster.
#pragma once

namespace omnib {

class NetLock {
 public:
  // Blocks until the lock is held. If the lock file cannot be opened the lock
  // is skipped (the subnet probe still makes a clash unlikely).
  NetLock();
  ~NetLock();
  NetLock(const NetLock&) = delete;
  NetLock& operator=(const NetLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace omnib
