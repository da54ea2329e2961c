#include "tools/net/net_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>

namespace omnib {

namespace {
constexpr const char* kLockPath = "/run/omni-bench-net.lock";
}

NetLock::NetLock() {
  fd_ = open(kLockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd_ < 0) return;
  // The kernel drops the lock when its holder dies, so a killed run never wedges the next.
  while (flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
  }
}

NetLock::~NetLock() {
  if (fd_ >= 0) close(fd_);
}

}  // namespace omnib
