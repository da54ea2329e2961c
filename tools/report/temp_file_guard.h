// Removing a temporary file when a signal ends the process while it exists:
// an atomic write (tools/report/atomic_file.h) interrupted by SIGINT, SIGTERM
// or SIGHUP leaves nothing beside the result file. SIGKILL cannot be caught:
// after kill -9 a `<file>.tmp.<hex>` may remain, and the result file itself
// is whole (the old version or the new one).
#pragma once

#include <string>

namespace omnib {

// While it lives, the path it watches is removed if SIGINT, SIGTERM or
// SIGHUP arrives and the process has no handler of its own for it (the
// signal then still ends the process, as it would have). A process with its
// own handler goes on, and the write finishes or fails as usual. Watch a
// name before creating the file, so that no moment is left uncovered. Up to
// four guards at a time; more are not registered (their files are still
// removed on every other path), nor are paths longer than 4095 bytes.
class TempFileGuard {
 public:
  TempFileGuard() = default;
  ~TempFileGuard();
  // Watches `path` instead of the path watched so far.
  void watch(const std::string& path);
  TempFileGuard(const TempFileGuard&) = delete;
  TempFileGuard& operator=(const TempFileGuard&) = delete;

 private:
  int slot_ = -1;
};

}  // namespace omnib
