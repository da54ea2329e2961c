// The rank's start-up environment: what the run's algorithms ask for,
// merged; refused when two disagree; written only while the process has one
// thread (checked), remembering what the user had set.
#include "tools/allreduce/start_up_env.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <thread>

#include "engine/build_features.h"
#include "tools/allreduce/device_tensors.h"
#include "tools/measure/process_resources.h"

namespace omnib {
namespace {

constexpr const char* kVar = "OMNIB_START_UP_ENV_TEST";

bool single_threaded() {
  auto r = read_resources();
  return r.is_ok() && r.value().threads == 1;
}

// What `f` returns while a second thread of this process runs.
template <typename F>
auto beside_another_thread(F f) {
  std::atomic<bool> stop{false};
  std::thread other([&] {
    while (!stop) std::this_thread::yield();
  });
  auto result = f();
  stop = true;
  other.join();
  return result;
}

TEST(StartUpEnv, AlgorithmsWithoutEnvironmentAskForNothing) {
  EXPECT_TRUE(merge_process_env({"omni", "ring", "ps"}, ProcessPlacement{}).empty());
}

// One process, one environment: the first NCCL variant listed sets NCCL_ALGO
// (the other then says it cannot run: NcclEnvPlan.AVariantListedAfterAnother...).
TEST(StartUpEnv, TheFirstAlgorithmToAskSetsAVariable) {
  if (!OMNIB_WITH_NCCL) GTEST_SKIP() << "this build has no NCCL: its names ask for no environment";
  for (const auto& [algos, expect] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"omni", "nccl"}, "Ring"}, {{"nccl", "omni", "nccl-tree"}, "Ring"}, {{"nccl-tree", "nccl"}, "Tree"}}) {
    const auto env = merge_process_env(algos, ProcessPlacement{});
    ASSERT_EQ(env.size(), 1u);
    EXPECT_EQ(env[0].name, "NCCL_ALGO");
    EXPECT_EQ(env[0].value, expect) << algos[0];
  }
}

// The local launcher puts every rank on this machine: at most the job's
// workers share the host; aggregators are no workers.
TEST(StartUpEnv, PlacementUnderTheLocalLauncherCountsTheWorkers) {
  RunPlan plan;
  plan.base.nodes = 4;
  plan.base.aggregators = 2;
  LaunchEnv launch;
  launch.world = 6;
  launch.host_tasks = 6;
  launch.rank = 3;
  ProcessPlacement p = placement_at_start_up(plan, launch, 1);
  EXPECT_TRUE(p.worker);
  EXPECT_EQ(p.host_workers_at_most, 4);
  EXPECT_EQ(p.visible_gpus, 1);
  launch.rank = 5;
  EXPECT_FALSE(placement_at_start_up(plan, launch, 1).worker);
  launch.host_tasks.reset();
  EXPECT_FALSE(placement_at_start_up(plan, launch, 1).host_workers_at_most.has_value());
}

TEST(StartUpEnv, WritesOnceAndRemembersTheUsersValue) {
  setenv(kVar, "user", 1);
  auto changes = write_process_env({{kVar, "ours"}});
  ASSERT_TRUE(changes.is_ok()) << changes.status().message();
  ASSERT_EQ(changes.value().size(), 1u);
  EXPECT_EQ(changes.value()[0].previous, "user");
  EXPECT_STREQ(std::getenv(kVar), "ours");
  unsetenv(kVar);
  changes = write_process_env({{kVar, "ours"}});
  ASSERT_TRUE(changes.is_ok()) << changes.status().message();
  EXPECT_FALSE(changes.value()[0].previous.has_value());
  unsetenv(kVar);
}

TEST(StartUpEnv, RefusesToWriteWhileAnotherThreadRuns) {
  const Status s = beside_another_thread([] { return require_single_thread(); });
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.code(), Code::kInternal);
  EXPECT_NE(s.message().find("threads running"), std::string::npos) << s.message();
}

// A run whose algorithms ask for nothing neither checks nor writes.
TEST(StartUpEnv, ARunWithoutNcclWritesNothing) {
  RunPlan plan;
  plan.algos = {"omni", "ring"};
  auto changes = beside_another_thread([&] { return set_up_process_env(plan, LaunchEnv{}); });
  ASSERT_TRUE(changes.is_ok()) << changes.status().message();
  EXPECT_TRUE(changes.value().empty());
}

// Start-up counts the GPUs (NCCL's host ids depend on it) between its check
// for a single thread and its write: the count must start no thread that
// could read the environment meanwhile. On a GPU machine this checks CUDA's
// driver itself.
TEST(StartUpEnv, CountingTheGpusStartsNoThread) {
  if (!single_threaded()) GTEST_SKIP() << "an earlier test left a thread running in this process";
  const int gpus = visible_gpus();
  auto after = read_resources();
  ASSERT_TRUE(after.is_ok()) << after.status().message();
  EXPECT_EQ(after.value().threads, 1u) << "after counting " << gpus << " GPUs";
}

}  // namespace
}  // namespace omnib
