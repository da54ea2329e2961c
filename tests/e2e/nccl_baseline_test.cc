// The NCCL baseline: on a machine with a GPU it must agree with the
// reference (and run beside omni); without one it must be reported as
// skipped, or, asked for alone, fail as unavailable (exit 6) saying why.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/cli_runner.h"
#include "engine/build_features.h"

#if OMNIB_WITH_NCCL
#include <cuda_runtime.h>
#endif

namespace omnib {
namespace {

using testing::read_json;
using testing::run_cli;
using testing::temp_path;

// Why this machine cannot run NCCL, or nullopt when it can.
std::optional<std::string> why_no_gpu() {
#if OMNIB_WITH_NCCL
  int devices = 0;
  cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess) return std::string("cudaGetDeviceCount: ") + cudaGetErrorString(e);
  if (devices == 0) return std::string("cudaGetDeviceCount found 0 devices");
  return std::nullopt;
#else
  return std::string("this build has no NCCL/CUDA");
#endif
}

const nlohmann::json* result_of(const nlohmann::json& doc, const std::string& algo) {
  for (const auto& r : doc["results"])
    if (r["algo"] == algo) return &r;
  return nullptr;
}

// Runs `algos` (`count` of them) on `nodes` ranks at two sizes, with `env`
// added; every row must be checked and correct, and each algorithm named in
// `notes` must say every text listed for it in its note.
void expect_correct_on_gpu(const std::string& algos, size_t count, int nodes,
                           const std::multimap<std::string, std::string>& notes,
                           const std::vector<std::string>& env = {}) {
  const std::string json = temp_path("out.json");
  auto r = run_cli({"allreduce", "--algo", algos, "--nodes", std::to_string(nodes), "-b", "400012", "-e", "4000120",
                    "-f", "10", "--density", "0.1", "-n", "2", "-w", "1", "-T", "60", "-J", json},
                   env, 120);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto doc = read_json(json);
  ASSERT_EQ(doc["results"].size(), 2 * count);
  for (const auto& row : doc["results"]) {
    EXPECT_FALSE(row["skipped"].get<bool>()) << row.dump();
    EXPECT_TRUE(row["correct"].get<bool>()) << row["algo"] << " " << row["size_bytes"];
    EXPECT_EQ(row["wrong_elements"].get<uint64_t>(), 0u) << row["algo"];
  }
  for (const auto& [algo, text] : notes) {
    const auto* row = result_of(doc, algo);
    ASSERT_NE(row, nullptr) << algo;
    EXPECT_NE(row->value("note", "").find(text), std::string::npos) << row->dump();
  }
}

TEST(NcclBaseline, MatchesReferenceBesideOmniOnAGpu) {
  if (auto why = why_no_gpu()) GTEST_SKIP() << "no CUDA device: " << *why;
  expect_correct_on_gpu("nccl,omni", 2, 2, {{"nccl", "NCCL_ALGO=Ring"}});
}

// nccl-tree forces NCCL's double binary tree, replacing a user's NCCL_ALGO.
TEST(NcclBaseline, TreeMatchesReferenceOnAGpu) {
  if (auto why = why_no_gpu()) GTEST_SKIP() << "no CUDA device: " << *why;
  expect_correct_on_gpu("nccl-tree", 1, 3, {{"nccl-tree", "NCCL_ALGO=Tree (replacing NCCL_ALGO=Ring)"}},
                        {"NCCL_ALGO=Ring"});
}

#if OMNIB_WITH_NCCL
int visible_gpus() {
  int devices = 0;
  return cudaGetDeviceCount(&devices) == cudaSuccess ? devices : 0;
}
#else
int visible_gpus() { return 0; }
#endif

// More ranks than GPUs: each its own NCCL_HOSTID, in place of the user's.
TEST(NcclBaseline, RanksSharingAGpuEachHaveTheirOwnHostId) {
  if (auto why = why_no_gpu()) GTEST_SKIP() << "no CUDA device: " << *why;
  const int nodes = visible_gpus() + 1;
  expect_correct_on_gpu("nccl", 1, nodes,
                        {{"nccl", "each has its own NCCL_HOSTID"}, {"nccl", "socket transport"},
                         {"nccl", "(replacing NCCL_HOSTID=shared-by-all)"}},
                        {"NCCL_HOSTID=shared-by-all"});
}

// One process has one environment, written once: the variant listed first
// sets NCCL_ALGO, and the other is skipped, saying why, while the rest runs.
TEST(NcclBaseline, TreeListedAfterTheRingIsSkippedWithItsReason) {
  if (!OMNIB_WITH_NCCL) GTEST_SKIP() << "this build has no NCCL: both are skipped for that";
  const std::string json = temp_path("both.json");
  auto r = run_cli({"allreduce", "--algo", "omni,nccl,nccl-tree", "--nodes", "2", "-b", "64K", "-e", "64K", "-n", "2",
                    "-w", "1", "-T", "60", "-J", json},
                   {}, 120);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto doc = read_json(json);
  const auto* tree = result_of(doc, "nccl-tree");
  ASSERT_NE(tree, nullptr);
  EXPECT_TRUE(tree->value("skipped", false)) << tree->dump();
  EXPECT_NE(tree->value("skip_reason", "").find("measure nccl-tree in a run without nccl"), std::string::npos)
      << tree->dump();
  const auto* omni = result_of(doc, "omni");
  ASSERT_NE(omni, nullptr);
  EXPECT_TRUE(omni->value("correct", false)) << omni->dump();
}

class NcclAlone : public ::testing::TestWithParam<std::string> {};

TEST_P(NcclAlone, WithoutAGpuExitsUnavailable) {
  if (!why_no_gpu()) GTEST_SKIP() << "a CUDA device is visible: this test is for machines without one";
  auto r = run_cli({"allreduce", "--algo", GetParam(), "--nodes", "2", "-b", "4K", "-e", "4K", "-T", "20"}, {}, 60);
  EXPECT_EQ(r.exit_code, 6) << r.out << r.err;
  EXPECT_NE(r.err.find(GetParam()), std::string::npos) << r.err;
  const bool says_why = r.err.find("no CUDA device visible") != std::string::npos ||
                        r.err.find("this build has no NCCL") != std::string::npos;
  EXPECT_TRUE(says_why) << r.err;
}

INSTANTIATE_TEST_SUITE_P(Algorithms, NcclAlone, ::testing::Values("nccl", "nccl-tree"), [](const auto& info) {
  return info.param == "nccl" ? std::string("ring") : std::string("tree");
});

TEST(NcclBaseline, BesideOmniWithoutAGpuIsSkippedWhileOmniRuns) {
  if (!why_no_gpu()) GTEST_SKIP() << "a CUDA device is visible: this test is for machines without one";
  const std::string json = temp_path("out.json");
  auto r = run_cli({"allreduce", "--algo", "omni,nccl", "--nodes", "2", "-b", "64K", "-e", "64K", "--density", "0.1",
                    "-n", "2", "-w", "1", "-T", "20", "-J", json},
                   {}, 60);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto doc = read_json(json);
  const auto* omni = result_of(doc, "omni");
  const auto* nccl = result_of(doc, "nccl");
  ASSERT_NE(omni, nullptr);
  ASSERT_NE(nccl, nullptr);
  EXPECT_FALSE(omni->value("skipped", true));
  EXPECT_TRUE(omni->value("correct", false));
  EXPECT_TRUE(nccl->value("skipped", false)) << nccl->dump();
  EXPECT_FALSE(nccl->value("skip_reason", "").empty()) << nccl->dump();
  EXPECT_NE(r.out.find("skipped"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace omnib
