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

// Ranks started the way an external launcher would.
struct StartedRanks {
  std::vector<std::string> args;
  std::vector<std::string> env;           // "K=V", added to every rank's environment
  std::vector<std::string> stderr_paths;  // rank r's stderr, when given; else /dev/null
  int port = -1;                          // MASTER_PORT: where rank 0 serves the store
  std::vector<pid_t> pids;                // -1: not started yet
};

// A loopback port nothing listens on right now (-1 if none could be had).
int free_loopback_port();

// Starts every rank of `world` on a free loopback port, except `held_back`
// (start it later with start_held_rank).
StartedRanks start_ranks(const std::vector<std::string>& args, int world, const std::vector<std::string>& env = {},
                         const std::vector<std::string>& stderr_paths = {}, int held_back = -1);
void start_held_rank(StartedRanks& ranks, int rank);

// How a rank ended: its exit code (128 + signal when killed, -1 when still
// running at the limit) and when, counted from the call.
struct RankEnd {
  int code;
  double seconds;
};

// Waits at most `limit` for every rank, then kills and reaps any left, so
// none outlives the test. Returns each rank's end, in rank order.
std::vector<RankEnd> wait_ranks(const StartedRanks& ranks, std::chrono::milliseconds limit);

// Starts `hit.world` ranks of `args` on a free loopback port, sends
// `hit.signal` to rank `hit.victim` after `hit.settle`, and returns how each
// other rank ended within `hit.grace` of the hit, in rank order. Every rank is
// killed and reaped before it returns, so none outlives the test.
std::vector<RankExit> hit_one_rank(const std::vector<std::string>& args, const PeerHit& hit);

}  // namespace omnib::testing
