// The frequency-sorted zipf workload (--workload zipf:ALPHA:sorted): the same
// row probabilities as zipf:ALPHA, in index order, so the non-zeros crowd
// the front of the tensor; deterministic per seed; parsed strictly and
// recorded in the configuration.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/blocks/block_layout.h"
#include "tests/support/cli_runner.h"
#include "tools/workloads/workload_choice.h"
#include "tools/workloads/zipf_workload.h"

namespace omnib {
namespace {

constexpr size_t kRowLength = 64;
constexpr size_t kCount = size_t{1} << 20;  // 16384 rows of 64
constexpr int kNodes = 4;

WorkloadSpec zipf_spec(bool sorted, uint64_t seed = 7) {
  WorkloadSpec s;
  s.name = "zipf";
  s.label = sorted ? "zipf:1.1:sorted" : "zipf:1.1";
  s.zipf_alpha = 1.1;
  s.zipf_sorted = sorted;
  s.density = 0.01;
  s.block_size = kRowLength;
  s.nodes = kNodes;
  s.seed = seed;
  return s;
}

std::unique_ptr<Workload> make(const WorkloadSpec& s) {
  auto w = make_workload(s);
  EXPECT_TRUE(w.is_ok()) << w.status().message();
  return w.take();
}

std::vector<float> tensor_of(const Workload& w, int rank) {
  std::vector<float> t(kCount);
  w.fill(rank, TensorView{t.data(), kCount, DType::kFloat32, DeviceKind::kCpu});
  return t;
}

// Per row: whether any rank's row is non-zero.
std::vector<bool> union_rows(const Workload& w) {
  const BlockLayout layout(kCount, kRowLength);
  std::vector<bool> rows(layout.num_blocks(), false);
  for (int r = 0; r < kNodes; ++r) {
    const std::vector<float> t = tensor_of(w, r);
    for (size_t i = 0; i < kCount; ++i)
      if (t[i] != 0) rows[i / kRowLength] = true;
  }
  return rows;
}

// The share of the union's rows that lie in the first tenth of the table.
double front_share(const std::vector<bool>& rows) {
  const auto total = static_cast<double>(std::count(rows.begin(), rows.end(), true));
  const auto front = static_cast<double>(std::count(rows.begin(), rows.begin() + static_cast<long>(rows.size() / 10), true));
  return total > 0 ? front / total : 0;
}

TEST(ZipfSortedWorkload, NonZerosCrowdTheFront) {
  // Expected: about two thirds of the union's ~470 rows in the first tenth
  // (a tenth when popularity is scattered); both bounds are > 6 sigma away.
  const double sorted = front_share(union_rows(*make(zipf_spec(true))));
  const double scattered = front_share(union_rows(*make(zipf_spec(false))));
  EXPECT_GT(sorted, 0.5);
  EXPECT_LT(scattered, 0.2);
}

TEST(ZipfSortedWorkload, SameProbabilitiesInIndexOrder) {
  auto sorted_w = make(zipf_spec(true));
  auto scattered_w = make(zipf_spec(false));
  std::vector<double> sorted = dynamic_cast<const ZipfWorkload&>(*sorted_w).row_probabilities(kCount);
  std::vector<double> scattered = dynamic_cast<const ZipfWorkload&>(*scattered_w).row_probabilities(kCount);
  EXPECT_TRUE(std::is_sorted(sorted.rbegin(), sorted.rend()));  // non-increasing in row order
  EXPECT_EQ(sorted.front(), 1.0);                                // the hottest row is row 0
  std::sort(scattered.begin(), scattered.end());
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, scattered);
}

TEST(ZipfSortedWorkload, DeterministicPerSeed) {
  auto a = make(zipf_spec(true, 7));
  auto b = make(zipf_spec(true, 7));
  auto other = make(zipf_spec(true, 8));
  for (int r = 0; r < kNodes; ++r) EXPECT_EQ(tensor_of(*a, r), tensor_of(*b, r)) << "rank " << r;
  EXPECT_NE(tensor_of(*a, 1), tensor_of(*other, 1));
  EXPECT_NE(tensor_of(*a, 1), tensor_of(*a, 2));  // ranks differ
}

TEST(ZipfSortedWorkload, ParsesAndLabels) {
  auto c = choose_workload("zipf:1.3:sorted", "", 2, DType::kFloat32);
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  EXPECT_TRUE(c.value().shape.zipf_sorted);
  EXPECT_DOUBLE_EQ(c.value().shape.zipf_alpha, 1.3);
  EXPECT_EQ(c.value().shape.label, "zipf:1.3:sorted");
  EXPECT_FALSE(choose_workload("zipf:1.3", "", 2, DType::kFloat32).value().shape.zipf_sorted);
}

TEST(ZipfSortedWorkload, BadFormsAreUsageErrorsThatNameTheForm) {
  for (const char* bad : {"zipf:1.1:foo", "zipf:1.1:sorted:x", "zipf:1.1:", "zipf:sorted", "zipf::sorted",
                          "zipf:0:sorted", "zipf:x:sorted"}) {
    auto r = choose_workload(bad, "", 2, DType::kFloat32);
    ASSERT_FALSE(r.is_ok()) << bad;
    EXPECT_EQ(r.status().code(), Code::kUsage) << bad;
    EXPECT_NE(r.status().message().find("zipf:1.1:sorted"), std::string::npos) << bad << ": " << r.status().message();
  }
}

TEST(ZipfSortedWorkloadCli, RecordsTheWorkloadAndRejectsBadForms) {
  const std::string json = testing::temp_path("zipf_sorted.json");
  auto ok = testing::run_cli({"allreduce", "--nodes", "3", "-n", "1", "-w", "0", "-b", "256K", "-e", "256K",
                              "--block-size", "64", "--density", "0.01", "--workload", "zipf:1.1:sorted", "--algo",
                              "omni,sparcml-split", "-J", json});
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  auto doc = testing::read_json(json);
  EXPECT_EQ(doc["configuration"]["workload"], "zipf:1.1:sorted");
  for (const auto& rec : doc["results"]) {
    EXPECT_EQ(rec["config"]["workload"], "zipf:1.1:sorted");
    EXPECT_TRUE(rec["correct"].get<bool>()) << rec["algo"];
  }
  auto bad = testing::run_cli({"allreduce", "--nodes", "2", "-b", "64K", "-e", "64K", "--workload", "zipf:1.1:hot"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("zipf:ALPHA:sorted"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace omnib
