// The launchers' counts of ranks per host, which decide at start-up whether
// workers may share a GPU.
#include "tools/launch/host_tasks.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace omnib {
namespace {

TEST(HostTasks, SlurmsCompactListIsReadAtTheNode) {
  EXPECT_EQ(slurm_tasks_on_node("4", 0), 4);
  EXPECT_EQ(slurm_tasks_on_node("2(x3),1", 0), 2);
  EXPECT_EQ(slurm_tasks_on_node("2(x3),1", 2), 2);
  EXPECT_EQ(slurm_tasks_on_node("2(x3),1", 3), 1);
  EXPECT_EQ(slurm_tasks_on_node("2(x3),1", 4), std::nullopt);
  for (const char* bad : {"", "x", "2(x", "2(x)", "2(x3", "0", "-1", ",1", "2(x0)"})
    EXPECT_EQ(slurm_tasks_on_node(bad, 0), std::nullopt) << bad;
  EXPECT_EQ(slurm_tasks_on_node("2,,1", 1), std::nullopt);
}

class HostTasksFromEnv : public ::testing::Test {
 protected:
  void TearDown() override {
    for (const char* v : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_TASKS_PER_NODE", "SLURM_NODEID",
                          "LOCAL_WORLD_SIZE"})
      unsetenv(v);
  }
};

TEST_F(HostTasksFromEnv, EachLauncherItsOwnVariable) {
  setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "8", 1);
  setenv("MPI_LOCALNRANKS", "6", 1);
  setenv("SLURM_TASKS_PER_NODE", "4(x2),2", 1);
  setenv("SLURM_NODEID", "2", 1);
  EXPECT_EQ(host_tasks_from_env("mpirun"), 8);
  EXPECT_EQ(host_tasks_from_env("mpich"), 6);
  EXPECT_EQ(host_tasks_from_env("slurm"), 2);
  EXPECT_EQ(host_tasks_from_env("torchrun"), std::nullopt);
}

TEST_F(HostTasksFromEnv, LocalWorldSizeIsTheFallbackAndGarbageCountsForNothing) {
  setenv("LOCAL_WORLD_SIZE", "3", 1);
  EXPECT_EQ(host_tasks_from_env("torchrun"), 3);
  setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "lots", 1);
  EXPECT_EQ(host_tasks_from_env("mpirun"), 3);
  setenv("LOCAL_WORLD_SIZE", "0", 1);
  EXPECT_EQ(host_tasks_from_env("mpirun"), std::nullopt);
}

}  // namespace
}  // namespace omnib
