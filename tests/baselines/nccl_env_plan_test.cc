// NCCL's start-up environment, decided without a GPU: which ranks get a
// host id of their own, that the ids are distinct, that a host with a GPU
// per worker keeps the user's NCCL_HOSTID, and that the check made once the
// ranks have met agrees with the decision made at start-up.
#include "baselines/nccl/nccl_env_plan.h"

#include <gtest/gtest.h>

#include <set>

namespace omnib {
namespace {

const NcclVariant& variant(const std::string& name) {
  for (const NcclVariant& v : kNcclVariants)
    if (v.name == name) return v;
  throw std::runtime_error("no NCCL variant " + name);
}

ProcessPlacement worker(int rank, std::optional<int> host_workers, int gpus) {
  ProcessPlacement p;
  p.rank = rank;
  p.host_workers_at_most = host_workers;
  p.visible_gpus = gpus;
  return p;
}

std::optional<std::string> value_of(const std::vector<EnvSetting>& env, const std::string& name) {
  for (const EnvSetting& s : env)
    if (s.name == name) return s.value;
  return std::nullopt;
}

TEST(NcclEnvPlan, EachVariantForcesItsOwnAlgorithm) {
  EXPECT_EQ(value_of(nccl_process_env(variant("nccl"), worker(0, 4, 4)), kNcclAlgoVar), "Ring");
  EXPECT_EQ(value_of(nccl_process_env(variant("nccl-tree"), worker(0, 4, 4)), kNcclAlgoVar), "Tree");
}

// Two hosts of 8 workers and 1, 2 or 4 GPUs each: every worker has an id,
// and no two workers of the job share one.
TEST(NcclEnvPlan, EveryWorkerOfAHostWithMoreWorkersThanGpusGetsADistinctHostId) {
  for (int gpus : {1, 2, 4}) {
    std::set<std::string> ids;
    for (int rank = 0; rank < 16; ++rank) {
      auto id = value_of(nccl_process_env(variant("nccl"), worker(rank, 8, gpus)), kNcclHostIdVar);
      ASSERT_TRUE(id.has_value()) << "rank " << rank << ", " << gpus << " GPUs";
      ids.insert(*id);
    }
    EXPECT_EQ(ids.size(), 16u) << gpus << " GPUs";
  }
  EXPECT_EQ(nccl_host_id(3), "omnib-rank3");
}

// Decided: a host with a GPU per worker gets no NCCL_HOSTID from us, so a
// user's value stays (NCCL then uses its P2P and shared-memory transports
// between the host's GPUs); only sharing needs, and replaces, it.
TEST(NcclEnvPlan, AHostWithAGpuPerWorkerKeepsTheUsersHostId) {
  for (int gpus : {4, 8}) {
    const auto env = nccl_process_env(variant("nccl"), worker(1, 4, gpus));
    EXPECT_FALSE(value_of(env, kNcclHostIdVar).has_value()) << gpus << " GPUs";
    EXPECT_EQ(env.size(), 1u);
  }
}

// Without the launcher's count, or without a GPU, nothing is decided at
// start-up; the check after the rendezvous (below) catches a shared GPU.
TEST(NcclEnvPlan, NoCountOrNoGpuSetsNoHostId) {
  EXPECT_FALSE(needs_own_host_id(worker(0, std::nullopt, 1)));
  EXPECT_FALSE(needs_own_host_id(worker(0, 4, 0)));
}

TEST(NcclEnvPlan, AggregatorsGetNothing) {
  ProcessPlacement aggregator = worker(4, 8, 1);
  aggregator.worker = false;
  EXPECT_TRUE(nccl_process_env(variant("nccl"), aggregator).empty());
}

// Start-up wrote NCCL_ALGO for the variant listed first; the other says why
// it cannot run and what to do.
TEST(NcclEnvPlan, AVariantListedAfterAnotherSaysItCannotRun) {
  const std::vector<EnvChange> ring{{kNcclAlgoVar, "Ring", std::nullopt}};
  EXPECT_FALSE(algo_conflict(variant("nccl"), ring));
  EXPECT_FALSE(algo_conflict(variant("nccl-tree"), {}));
  auto why = algo_conflict(variant("nccl-tree"), ring);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("needs NCCL_ALGO=Tree, but the ranks set NCCL_ALGO=Ring for nccl"), std::string::npos) << *why;
  EXPECT_NE(why->find("measure nccl-tree in a run without nccl"), std::string::npos) << *why;
}

TEST(NcclEnvPlan, GpusAreDealtByLocalIndex) {
  // Three workers on two GPUs: 0 and 2 on GPU 0, 1 on GPU 1.
  EXPECT_EQ(nccl_gpu_of(0, 2), 0);
  EXPECT_EQ(nccl_gpu_of(1, 2), 1);
  EXPECT_EQ(nccl_gpu_of(2, 2), 0);
  EXPECT_EQ(ranks_on_gpu(0, 3, 2), 2);
  EXPECT_EQ(ranks_on_gpu(1, 3, 2), 1);
}

// Whenever the rendezvous finds a shared GPU, start-up (told at least as
// many workers as the host runs) gave every worker there its own id, so
// the later check never refuses a correctly launched job.
TEST(NcclEnvPlan, StartUpGivesAnIdWhereverTheRendezvousFindsASharedGpu) {
  for (int gpus = 1; gpus <= 8; ++gpus)
    for (int local = 1; local <= 16; ++local)
      for (int told = local; told <= local + 2; ++told)
        for (int index = 0; index < local; ++index) {
          const int gpu = nccl_gpu_of(index, gpus);
          const bool own_id = needs_own_host_id(worker(index, told, gpus));
          EXPECT_FALSE(shared_gpu_problem(gpu, ranks_on_gpu(gpu, local, gpus), own_id))
              << local << " workers, told " << told << ", " << gpus << " GPUs, index " << index;
        }
}

TEST(NcclEnvPlan, ASharedGpuWithoutAnIdOfItsOwnSaysWhatToDo) {
  auto why = shared_gpu_problem(0, 2, false);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("share GPU 0"), std::string::npos) << *why;
  EXPECT_NE(why->find("export LOCAL_WORLD_SIZE="), std::string::npos) << *why;
  EXPECT_FALSE(shared_gpu_problem(0, 2, true));
  EXPECT_FALSE(shared_gpu_problem(0, 1, false));
}

}  // namespace
}  // namespace omnib
