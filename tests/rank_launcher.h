// Starts omni-bench ranks one process each, the way an external launcher
// would (torchrun-style RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT), so that a
// test can kill or stop one rank and watch what the others do.
#pragma once

#include <signal.h>

#include <chrono>
#include <string>
#include <vector>

namespace omnib::testing {

struct PeerHit {
  int world = 3;
  int victim = 1;
  int signal = SIGSTOP;
  std::chrono::milliseconds settle{1000};  // how long the ranks run before the hit
  std::chrono::seconds grace{5};           // how long the others then have to exit
};

// How a rank other than the victim ended: its exit code (128 + signal when
// killed), or -1 when it was still running at the end of the grace period.
struct RankExit {
  int rank;
  int code;
};

// Starts `hit.world` ranks of `args` on a free loopback port, sends
// `hit.signal` to rank `hit.victim` after `hit.settle`, and returns how each
// other rank ended within `hit.grace` of the hit, in rank order. Every rank is
// killed and reaped before it returns, so none outlives the test.
std::vector<RankExit> hit_one_rank(const std::vector<std::string>& args, const PeerHit& hit);

}  // namespace omnib::testing
