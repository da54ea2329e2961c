#include "tools/report/temp_file_guard.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace omnib {
namespace {

constexpr int kSlots = 4;
constexpr size_t kPathBytes = 4096;

struct Slot {
  std::atomic<bool> taken{false};  // claimed by a guard
  std::atomic<bool> armed{false};  // `path` is complete and to be removed
  char path[kPathBytes];
};
Slot g_slots[kSlots];
static_assert(std::atomic<bool>::is_always_lock_free, "the handler reads these flags");

// Async-signal-safe: unlink() and raise() only.
void remove_and_end(int sig) {
  const int saved = errno;
  for (Slot& s : g_slots)
    if (s.armed.load(std::memory_order_acquire)) unlink(s.path);
  // SA_RESETHAND restored the default action: the signal now ends the
  // process as it would have without this handler (when this returns).
  raise(sig);
  errno = saved;
}

// Takes SIGINT, SIGTERM and SIGHUP where nobody else has (their action is
// still the default); an ignored signal or a handler of the process's own
// is left as it is.
void install_handlers() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction now {};
    if (sigaction(sig, nullptr, &now) != 0) continue;
    if ((now.sa_flags & SA_SIGINFO) || now.sa_handler != SIG_DFL) continue;
    struct sigaction sa {};
    sa.sa_handler = remove_and_end;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, nullptr);
  }
}

}  // namespace

void TempFileGuard::watch(const std::string& path) {
  // Every time: whoever set a signal back to its default since (a library,
  // a test) is covered again.
  install_handlers();
  if (slot_ < 0) {
    for (int i = 0; i < kSlots && slot_ < 0; ++i) {
      bool expected = false;
      if (g_slots[i].taken.compare_exchange_strong(expected, true)) slot_ = i;
    }
  }
  if (slot_ < 0) return;
  Slot& s = g_slots[slot_];
  s.armed.store(false, std::memory_order_release);
  if (path.size() >= kPathBytes) return;
  std::memcpy(s.path, path.c_str(), path.size() + 1);
  s.armed.store(true, std::memory_order_release);
}

TempFileGuard::~TempFileGuard() {
  if (slot_ < 0) return;
  g_slots[slot_].armed.store(false, std::memory_order_release);
  g_slots[slot_].taken.store(false, std::memory_order_release);
}

}  // namespace omnib
