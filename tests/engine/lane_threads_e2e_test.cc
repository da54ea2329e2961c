// A rank's threads must not grow with the job: the algorithms serve all
// their links from a fixed number of lanes (baselines/common/mesh_lanes.h,
// engine/lanes/link_lane.h), where a lane per peer would cost threads in
// proportion to the ranks. Ranks run as separate processes, started the
// way an external launcher would, so that one rank's threads can be counted
// in /proc while it runs.
#include <dirent.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "engine/build_features.h"
#include "tests/support/rank_launcher.h"

namespace omnib {
namespace {

// Threads of a live process (entries of /proc/PID/task); 0 when it is gone.
int threads_of(pid_t pid) {
  DIR* dir = opendir(("/proc/" + std::to_string(pid) + "/task").c_str());
  if (!dir) return 0;
  int n = 0;
  while (const dirent* e = readdir(dir))
    if (e->d_name[0] != '.') ++n;
  closedir(dir);
  return n;
}

// The most threads rank 1 had at once during a run of `algos` over
// `world` ranks (rank 0, which serves the store, is left out). Every rank
// must finish the run successfully.
int peak_threads(const std::string& algos, int world) {
  const std::vector<std::string> args{"allreduce", "--algo", algos, "-b", "64K", "-e", "64K", "--density", "0.05",
                                      "-n", "30", "-w", "0", "-T", "60"};
  const testing::StartedRanks ranks = testing::start_ranks(args, world);
  if (ranks.pids.empty()) return -1;
  std::atomic<bool> stop{false};
  std::atomic<int> peak{0};
  std::thread sampler([&] {
    while (!stop) {
      peak = std::max(peak.load(), threads_of(ranks.pids[1]));
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
  const auto ends = testing::wait_ranks(ranks, std::chrono::seconds(240));
  stop = true;
  sampler.join();
  for (size_t r = 0; r < ends.size(); ++r)
    EXPECT_EQ(ends[r].code, 0) << algos << " on " << world << " ranks: rank " << r << " failed";
  return peak;
}

std::vector<std::string> algorithm_sets() {
  std::vector<std::string> sets{"sparcml-split", "oktopk", "omni,ps,ring,tree,allgather,sparcml-recdbl"};
  if (OMNIB_WITH_GLOO) sets.push_back("gloo-ring,gloo-ring-chunked,gloo-halving-doubling,gloo-bcube");
  return sets;
}

class LaneThreads : public ::testing::TestWithParam<std::string> {};

// 8 and 16 ranks: a lane per peer would add at least 8 threads.
TEST_P(LaneThreads, DoNotGrowWithTheRanks) {
  const int at8 = peak_threads(GetParam(), 8);
  const int at16 = peak_threads(GetParam(), 16);
  std::printf("%s: rank 1 ran at most %d threads with 8 ranks, %d with 16\n", GetParam().c_str(), at8, at16);
  ASSERT_GT(at8, 0) << "no thread of rank 1 was ever seen";
  // A sampler every 2 ms can miss a short-lived thread at 8 ranks on a
  // loaded host (seen once: one more at 16); a lane per peer adds 8 or more.
  EXPECT_LE(at16, at8 + 2) << GetParam() << ": a rank ran " << at8 << " threads with 8 ranks and " << at16
                           << " with 16";
}

INSTANTIATE_TEST_SUITE_P(Algorithms, LaneThreads, ::testing::ValuesIn(algorithm_sets()), [](const auto& info) {
  std::string name = info.param;
  for (auto& ch : name)
    if (ch == '-' || ch == ',') ch = '_';
  return name;
});

}  // namespace
}  // namespace omnib
