// A rank that fails before or between collectives ends the whole job within
// a second or two, not after -T: it posts its failure to the store, and the
// local launcher posts the failure of any rank it reaps. The run's exit code
// does not depend on which rank the launcher reaps first.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <map>

#include "tests/support/cli_runner.h"
#include "tests/support/rank_launcher.h"
#include "tests/support/store_peer.h"
#include "tools/launch/local_launcher.h"

namespace omnib {
namespace {

using Clock = std::chrono::steady_clock;

// -T far above what any of these runs may take.
const std::vector<std::string> kLongTimeout = {"-T", "30"};

std::vector<std::string> allreduce_args(std::vector<std::string> more) {
  std::vector<std::string> args = {"allreduce", "-b", "64K", "-e", "64K", "-n", "2", "-w", "0"};
  args.insert(args.end(), kLongTimeout.begin(), kLongTimeout.end());
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// Runs `world` ranks under the local launcher in this process; ranks named in
// `shell` run that shell command instead of omni-bench.
int launch(int world, const std::map<int, std::string>& shell, double& seconds) {
  LocalLaunchPlan plan;
  plan.world = world;
  plan.argv = allreduce_args({"--nodes", std::to_string(world)});
  plan.argv.insert(plan.argv.begin(), OMNIB_BINARY);
  plan.grace = std::chrono::seconds(35);
  plan.wrap_command = [shell](int rank, const std::vector<std::string>& argv) {
    auto it = shell.find(rank);
    return it == shell.end() ? argv : std::vector<std::string>{"/bin/sh", "-c", it->second};
  };
  const auto start = Clock::now();
  const int code = launch_local(plan);
  seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return code;
}

TEST(FailureBroadcast, TheLauncherStopsRanksWaitingInTheStoreWhenOneExits) {
  ::testing::internal::CaptureStderr();
  double seconds = 0;
  const int code = launch(3, {{1, "sleep 0.3; exit 3"}}, seconds);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(code, 3) << err;
  EXPECT_LT(seconds, 3.0) << "ranks waited for -T instead of hearing of the failure";
  EXPECT_NE(err.find("rank 1 failed: exited with code 3"), std::string::npos) << err;
}

TEST(FailureBroadcast, ARankThatCannotBeExecutedSaysWhyAndStopsTheOthers) {
  LocalLaunchPlan plan;
  plan.world = 3;
  plan.argv = allreduce_args({"--nodes", "3"});
  plan.argv.insert(plan.argv.begin(), OMNIB_BINARY);
  plan.grace = std::chrono::seconds(35);
  plan.wrap_command = [](int rank, const std::vector<std::string>& argv) {
    return rank == 2 ? std::vector<std::string>{"/nonexistent-omnib-folder/omni-bench"} : argv;
  };
  ::testing::internal::CaptureStderr();
  const auto start = Clock::now();
  const int code = launch_local(plan);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(code, 6) << err;
  EXPECT_LT(seconds, 3.0) << "ranks waited for -T instead of hearing of the failure";
  EXPECT_NE(err.find("could not start rank 2 (/nonexistent-omnib-folder/omni-bench): No such file"), std::string::npos)
      << err;
}

TEST(FailureBroadcast, ARankThatFailsBetweenCollectivesStopsTheOthers) {
  // Rank 0 cannot write its result file; the launcher's check is not in the
  // way (an external launcher), so the failure happens inside the job.
  const int world = 3;
  std::vector<std::string> errs;
  for (int r = 0; r < world; ++r) errs.push_back(testing::temp_path("rank" + std::to_string(r) + ".err"));
  const auto ranks = testing::start_ranks(allreduce_args({"-J", "/nonexistent-omnib-folder/out.json"}), world,
                                          {"OMNIB_JOB_TOKEN=" + testing::test_token().hex()}, errs);
  const auto ends = testing::wait_ranks(ranks, std::chrono::seconds(20));
  ASSERT_EQ(ends.size(), 3u);
  EXPECT_EQ(ends[0].code, 2);
  for (int r = 1; r < world; ++r) {
    EXPECT_EQ(ends[r].code, 6) << "rank " << r;
    EXPECT_LT(ends[r].seconds, ends[0].seconds + 2.5) << "rank " << r << " waited for -T";
  }
  std::ifstream f(errs[1]);
  const std::string err((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_NE(err.find("rank 0 failed: cannot write"), std::string::npos) << err;
}

TEST(FailureBroadcast, ASignalKilledRankIsReportedAsSuchWhoeverIsReapedFirst) {
  double seconds = 0;
  // Rank 0 fails at once with 6 (as a rank that lost its peer would); rank 1
  // is killed a moment later. The kill is the cause: a crash, exit 1.
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(launch(2, {{0, "exit 6"}, {1, "sleep 0.3; kill -9 $$"}}, seconds), 1);
  EXPECT_EQ(launch(2, {{0, "sleep 0.3; exit 6"}, {1, "kill -11 $$"}}, seconds), 1);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("rank 1 was killed by signal 9"), std::string::npos) << err;
  EXPECT_NE(err.find("rank 1 was killed by signal 11"), std::string::npos) << err;
}

TEST(RunVerdict, OrderDoesNotMatter) {
  const int killed = W_EXITCODE(0, SIGKILL), six = W_EXITCODE(6, 0), two = W_EXITCODE(2, 0), ok = W_EXITCODE(0, 0);
  const std::vector<std::pair<std::vector<int>, int>> cases = {
      {{six, killed, ok}, 1}, {{killed, six, ok}, 1}, {{two, killed}, 1}, {{six, two}, 2}, {{two, six}, 2},
      {{six, six}, 6},          {{ok, ok}, 0},
  };
  for (const auto& [statuses, expected] : cases) {
    RunVerdict forward, backward;
    for (int s : statuses) forward.add(s, false);
    for (auto it = statuses.rbegin(); it != statuses.rend(); ++it) backward.add(*it, false);
    EXPECT_EQ(forward.code(false), expected);
    EXPECT_EQ(backward.code(false), expected);
  }
  RunVerdict interrupted;
  interrupted.add(W_EXITCODE(0, SIGTERM), true);  // our own SIGTERM
  EXPECT_EQ(interrupted.code(true), 130);
}

}  // namespace
}  // namespace omnib
