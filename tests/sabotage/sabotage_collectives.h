// Deliberately broken algorithms, built only into the test suite's
// omni-bench-sabotage binary, to prove that the harness's checks and the CI
// gate catch what they claim to catch. Never linked into omni-bench itself.
//
// Always registered (each wraps `ring`, a correct allreduce):
//   sabotage-noop      writes nothing
//   sabotage-identity  returns its input unchanged
//   sabotage-corrupt   correct, except one block of one call (the third)
//   sabotage-one-element  correct, except the lowest bit of the middle element
//                      in the third call (a near miss at the element's size)
//   sabotage-tail      correct, except the last quarter of the output, left unwritten
//   sabotage-throw     throws an exception from allreduce (an escaped exception is exit 1)
//   sabotage-throw-thread  throws from a thread of its own
//
// With OMNIB_SABOTAGE_OMNI set, `omni` itself is replaced by a broken one,
// so that an unmodified gate script (ci/perf_gate.sh) runs it:
//   noop        writes nothing (and sends nothing)
//   dense       sends every block, zero blocks included (the ps protocol)
//   double-cpu  after each call, burns as much CPU as the call used
//   sleep       after each call, sleeps OMNIB_SABOTAGE_SLEEP_US microseconds, or
//               else (F - 1) times as long as the call took, F being
//               OMNIB_SABOTAGE_SLOWDOWN (a factor in (1, 100], default 2): omni
//               becomes F times slower than its own code, whatever the host's speed
//   leak-memory each call keeps OMNIB_SABOTAGE_LEAK_BYTES (default 16 KiB) of
//               touched memory it never frees (up to 256 MiB per process, so
//               the machine survives a long run)
//   leak-fd     each call opens /dev/null and never closes it (up to 1000)
//
// With OMNIB_SABOTAGE_FLOOR=F (a factor in (1, 100]), every pass of the
// memory floor (tools/measure/memory_floor.h) counts F times the time it
// took: an inflated floor, which the floor's test must catch.
#pragma once

#include "engine/base/status.h"

namespace omnib::sabotage {

// Registers the sabotage algorithms and applies OMNIB_SABOTAGE_OMNI and
// OMNIB_SABOTAGE_FLOOR. Call once, before the command line is parsed.
Status install();

}  // namespace omnib::sabotage
