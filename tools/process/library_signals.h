// Signals that shared libraries took for themselves before main, given back.
//
// libfabric's psm provider pulls in libinfinipath, whose constructor (unless
// IPATH_NO_BACKTRACE is set) takes SIGINT, SIGTERM, SIGSEGV, SIGBUS, SIGILL
// and SIGABRT: on any of them it writes "<program>.<time>s-<pid>,<host>.btr"
// into the working directory and exits 1. A rank stopped by the launcher's
// SIGTERM would then leave a file behind and report a failure (Ctrl-C would
// end in 1, not 130), and a crash would no longer show as a signal.
// omni-bench opens libfabric only when it is first used, and keeps the
// handlers it had across that (engine/transport/fabric_library.cc); this is
// for anything that still links those libraries at start.
#pragma once

namespace omnib {

// Puts every such signal whose handler lives in one of those libraries back
// to its default action; handlers of anything else (our own, a sanitizer's)
// are left alone. Call it first thing in main, before any thread starts.
void release_signals_taken_by_libraries();

}  // namespace omnib
