#include "tools/process/library_signals.h"

#include <dlfcn.h>
#include <signal.h>

#include <cstring>
#include <initializer_list>

namespace omnib {

namespace {

// Libraries known to install handlers from their constructors.
bool is_taking_library(const char* file) {
  return file && (std::strstr(file, "libinfinipath") || std::strstr(file, "libpsm"));
}

}  // namespace

void release_signals_taken_by_libraries() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGSEGV, SIGBUS, SIGILL, SIGABRT, SIGFPE}) {
    struct sigaction now {};
    if (sigaction(sig, nullptr, &now) != 0) continue;
    const void* handler = (now.sa_flags & SA_SIGINFO) ? reinterpret_cast<const void*>(now.sa_sigaction)
                                                       : reinterpret_cast<const void*>(now.sa_handler);
    if (now.sa_handler == SIG_DFL || now.sa_handler == SIG_IGN) continue;
    Dl_info where{};
    if (dladdr(handler, &where) == 0 || !is_taking_library(where.dli_fname)) continue;
    signal(sig, SIG_DFL);
  }
}

}  // namespace omnib
