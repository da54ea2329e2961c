// A dead or silent peer makes every rank exit non-zero within the timeout,
// instead of hanging. Ranks are started the way an external launcher would
// (torchrun-style RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT), so the test can
// kill or stop one of them. Over each transport this build has.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "engine/build_features.h"
#include "tests/support/rank_launcher.h"

namespace omnib {
namespace {

class PeerFailure : public ::testing::TestWithParam<std::tuple<int, std::string>> {};

TEST_P(PeerFailure, EveryOtherRankExitsNonZeroWithinTheTimeout) {
  const auto& [signal_to_send, transport] = GetParam();
  constexpr int kTimeoutSeconds = 3;
  // Many iterations: the run is still going when the victim is hit.
  std::vector<std::string> args{"allreduce", "--algo", "omni", "-b", "256K", "-e", "256K", "-n", "1000000",
                                "-w", "0", "-T", std::to_string(kTimeoutSeconds), "--density", "0.1",
                                "--transport", transport};
  // libfabric's tcp provider, where the build has it (CI has no RDMA hardware).
  if (transport == "fabric") args.insert(args.end(), {"--fabric-provider", "tcp"});
  // Allowed: the timeout for the wait in progress, plus one more for a store
  // wait, plus slack for a loaded 2-core machine.
  const testing::PeerHit hit{.world = 3, .victim = 1, .signal = signal_to_send,
                             .settle = std::chrono::milliseconds(1500),
                             .grace = std::chrono::seconds(2 * kTimeoutSeconds + 5)};
  // A silent peer is noticed as a timeout (exit 4) by whoever waits on it
  // first; the others may instead see that rank's links close (exit 6).
  bool someone_timed_out = false;
  for (const auto& [rank, code] : testing::hit_one_rank(args, hit)) {
    EXPECT_NE(code, -1) << "rank " << rank << " still running after the timeout";
    EXPECT_NE(code, 0) << "rank " << rank;
    someone_timed_out |= code == 4;
  }
  if (signal_to_send == SIGSTOP) {
    EXPECT_TRUE(someone_timed_out) << "a silent peer must be reported as a timeout";
  }
}

std::vector<std::string> transports() {
  if (OMNIB_WITH_LIBFABRIC) return {"tcp", "fabric"};
  return {"tcp"};
}

INSTANTIATE_TEST_SUITE_P(Signals, PeerFailure,
                         ::testing::Combine(::testing::Values(SIGKILL, SIGSTOP), ::testing::ValuesIn(transports())),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param) == SIGKILL ? "dead_peer" : "silent_peer") +
                                  "_over_" + std::get<1>(info.param);
                         });

}  // namespace
}  // namespace omnib
