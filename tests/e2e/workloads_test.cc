// Workload generators: measured densities against what was asked (within
// sampling error), determinism in (seed, rank), exact top-k, and .npy replay.
#include <cmath>
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/blocks/block_layout.h"
#include "tests/support/cli_runner.h"
#include "tests/support/npy_test_files.h"
#include "tools/allreduce/allreduce_options.h"
#include "tools/allreduce/run_plan.h"
#include "tools/allreduce/input_reference.h"
#include "tools/workloads/npy_workload.h"
#include "tools/workloads/presets.h"
#include "tools/workloads/topk_workload.h"
#include "tools/workloads/workload.h"
#include "tools/workloads/workload_choice.h"
#include "tools/workloads/zipf_workload.h"

namespace omnib {
namespace {

constexpr size_t kCount = size_t{1} << 22;  // 16384 blocks of 256
constexpr double kSigmas = 4;

// Tolerance for a proportion p measured over n independent trials.
double tolerance(double p, double n) { return kSigmas * std::sqrt(std::max(p * (1 - p), 0.0) / n) + 1e-9; }

struct Measured {
  std::vector<double> element, block;  // per rank
  double union_element = 0, union_block = 0;
  std::vector<std::vector<float>> tensors;
};

Measured measure(const Workload& w, int nodes, size_t count, size_t block_size) {
  Measured m;
  const BlockLayout layout(count, block_size);
  std::vector<uint8_t> in_union_elem(count, 0), in_union_block(layout.num_blocks(), 0);
  for (int r = 0; r < nodes; ++r) {
    std::vector<float> t(count);
    w.fill(r, TensorView{t.data(), count, DType::kFloat32, DeviceKind::kCpu});
    size_t elements = 0, blocks = 0;
    for (uint64_t b = 0; b < layout.num_blocks(); ++b) {
      bool any = false;
      for (size_t i = layout.block_begin(b); i < layout.block_begin(b) + layout.block_length(b); ++i) {
        if (t[i] != 0) {
          ++elements;
          any = true;
          in_union_elem[i] = 1;
        }
      }
      if (any) {
        ++blocks;
        in_union_block[b] = 1;
      }
    }
    m.element.push_back(static_cast<double>(elements) / static_cast<double>(count));
    m.block.push_back(static_cast<double>(blocks) / static_cast<double>(layout.num_blocks()));
    m.tensors.push_back(std::move(t));
  }
  m.union_element = std::accumulate(in_union_elem.begin(), in_union_elem.end(), 0.0) / static_cast<double>(count);
  m.union_block = std::accumulate(in_union_block.begin(), in_union_block.end(), 0.0) /
                  static_cast<double>(layout.num_blocks());
  return m;
}

WorkloadSpec spec_for(const std::string& name, double density, int nodes, const std::string& overlap = "random") {
  WorkloadSpec s;
  s.name = s.label = name;
  s.density = density;
  s.nodes = nodes;
  s.seed = 7;
  s.overlap = parse_overlap(overlap).value();
  return s;
}

std::unique_ptr<Workload> make(const WorkloadSpec& s) {
  auto w = make_workload(s);
  EXPECT_TRUE(w.is_ok()) << w.status().message();
  return w.take();
}

double blocks_count() { return static_cast<double>(kCount / 256); }

// ---- blocks -------------------------------------------------------------

TEST(BlocksWorkload, RandomOverlapUnionIsIndependent) {
  const double d = 0.1;
  const int n = 4;
  auto w = make(spec_for("blocks", d, n, "random"));
  Measured m = measure(*w, n, kCount, 256);
  for (int r = 0; r < n; ++r) {
    EXPECT_NEAR(m.block[r], d, tolerance(d, blocks_count())) << "rank " << r;
    EXPECT_DOUBLE_EQ(m.element[r], m.block[r]);  // whole blocks
  }
  const double expect_union = 1 - std::pow(1 - d, n);
  EXPECT_NEAR(m.union_block, expect_union, tolerance(expect_union, blocks_count()));
}

TEST(BlocksWorkload, FullOverlapUnionEqualsDensity) {
  const double d = 0.1;
  const int n = 4;
  auto w = make(spec_for("blocks", d, n, "full"));
  Measured m = measure(*w, n, kCount, 256);
  for (int r = 0; r < n; ++r) EXPECT_DOUBLE_EQ(m.block[r], m.union_block);
  EXPECT_NEAR(m.union_block, d, tolerance(d, blocks_count()));
}

TEST(BlocksWorkload, NoOverlapUnionIsNodesTimesDensity) {
  const double d = 0.1;
  const int n = 4;
  auto w = make(spec_for("blocks", d, n, "none"));
  Measured m = measure(*w, n, kCount, 256);
  double sum = 0;
  for (int r = 0; r < n; ++r) {
    EXPECT_NEAR(m.block[r], d, tolerance(d, blocks_count())) << "rank " << r;
    sum += m.block[r];
  }
  EXPECT_NEAR(m.union_block, sum, 1e-12);  // disjoint sets
  EXPECT_NEAR(m.union_block, n * d, tolerance(n * d, blocks_count()));
}

TEST(BlocksWorkload, PartialOverlapSharesAFraction) {
  const double d = 0.1, f = 0.5;
  const int n = 4;
  auto w = make(spec_for("blocks", d, n, "0.5"));
  Measured m = measure(*w, n, kCount, 256);
  const double expect_union = f * d + n * (1 - f) * d;
  EXPECT_NEAR(m.union_block, expect_union, tolerance(expect_union, blocks_count()));
}

// ---- scattered ----------------------------------------------------------

TEST(ScatteredWorkload, BlockDensityFollowsElementDensity) {
  const double d = 0.001;
  const int n = 3;
  auto w = make(spec_for("scattered", d, n));
  Measured m = measure(*w, n, kCount, 256);
  const double block = 1 - std::pow(1 - d, 256);
  for (int r = 0; r < n; ++r) {
    EXPECT_NEAR(m.element[r], d, tolerance(d, kCount)) << "rank " << r;
    EXPECT_NEAR(m.block[r], block, tolerance(block, blocks_count())) << "rank " << r;
  }
  const double union_elem = 1 - std::pow(1 - d, n);
  const double union_block = 1 - std::pow(1 - d, 256 * n);
  EXPECT_NEAR(m.union_element, union_elem, tolerance(union_elem, kCount));
  EXPECT_NEAR(m.union_block, union_block, tolerance(union_block, blocks_count()));
}

// ---- zipf ---------------------------------------------------------------

TEST(ZipfWorkload, RowsFollowThePowerLawAndOverlap) {
  const double d = 0.05;
  const int n = 4;
  WorkloadSpec s = spec_for("zipf", d, n);
  s.zipf_alpha = 1.1;
  auto w = make(s);
  const auto& zipf = dynamic_cast<const ZipfWorkload&>(*w);
  const std::vector<double> p = zipf.row_probabilities(kCount);
  const double rows = static_cast<double>(p.size());
  // c is calibrated so that density * rows rows are touched in expectation.
  EXPECT_NEAR(std::accumulate(p.begin(), p.end(), 0.0) / rows, d, 1e-9);
  double var_rows = 0, expect_union = 0, var_union = 0;
  for (double q : p) {
    var_rows += q * (1 - q);
    const double u = 1 - std::pow(1 - q, n);
    expect_union += u / rows;
    var_union += u * (1 - u);
  }
  Measured m = measure(*w, n, kCount, 256);
  for (int r = 0; r < n; ++r) {
    EXPECT_NEAR(m.block[r], d, kSigmas * std::sqrt(var_rows) / rows + 1e-9) << "rank " << r;
    EXPECT_DOUBLE_EQ(m.element[r], m.block[r]);  // whole rows
  }
  EXPECT_NEAR(m.union_block, expect_union, kSigmas * std::sqrt(var_union) / rows + 1e-9);
  // Hot rows are shared: the union is well below that of independent sets.
  const double independent = 1 - std::pow(1 - d, n);
  EXPECT_LT(m.union_block, independent - tolerance(independent, rows));
  // The hottest rows are touched by every rank.
  EXPECT_DOUBLE_EQ(*std::max_element(p.begin(), p.end()), 1.0);
}

TEST(ZipfWorkload, SteeperLawOverlapsMore) {
  const double d = 0.05;
  const int n = 4;
  double previous_union = 2;
  for (double alpha : {0.6, 1.1, 2.0}) {
    WorkloadSpec s = spec_for("zipf", d, n);
    s.zipf_alpha = alpha;
    auto w = make(s);
    Measured m = measure(*w, n, kCount / 4, 256);
    EXPECT_LT(m.union_block, previous_union) << "alpha " << alpha;
    previous_union = m.union_block;
  }
}

TEST(ZipfWorkload, DensePrefixIsNonZeroEverywhere) {
  WorkloadSpec s = spec_for("zipf", 0.3, 3);
  s.dense_fraction = 0.25;
  auto w = make(s);
  Measured m = measure(*w, 3, kCount / 4, 256);
  const size_t prefix = kCount / 4 / 4;
  for (const auto& t : m.tensors)
    for (size_t i = 0; i < prefix; ++i) ASSERT_NE(t[i], 0.0f) << i;
  for (int r = 0; r < 3; ++r) EXPECT_NEAR(m.element[r], 0.3, 0.02);
}

TEST(ZipfWorkload, RejectsABadExponent) {
  WorkloadSpec s = spec_for("zipf", 0.1, 2);
  s.zipf_alpha = -1;
  auto w = make_workload(s);
  EXPECT_EQ(w.status().code(), Code::kUsage);
}

// ---- topk ---------------------------------------------------------------

TEST(TopkWorkload, KeepsExactlyK) {
  for (double d : {0.0, 0.01, 0.013, 0.5, 1.0}) {
    for (size_t count : {size_t{1}, size_t{1000}, size_t{1000003}}) {
      auto w = make(spec_for("topk", d, 2));
      const size_t k = TopkWorkload::kept(d, count);
      EXPECT_EQ(k, static_cast<size_t>(std::llround(d * static_cast<double>(count))));
      for (int r = 0; r < 2; ++r) {
        std::vector<float> t(count);
        w->fill(r, TensorView{t.data(), count, DType::kFloat32, DeviceKind::kCpu});
        const auto nonzero = static_cast<size_t>(std::count_if(t.begin(), t.end(), [](float v) { return v != 0; }));
        EXPECT_EQ(nonzero, k) << "density " << d << " count " << count << " rank " << r;
      }
    }
  }
}

TEST(TopkWorkload, RanksOverlapAndCluster) {
  const double d = 0.02;
  const int n = 4;
  auto w = make(spec_for("topk", d, n));
  Measured m = measure(*w, n, kCount, 256);
  for (int r = 0; r < n; ++r) {
    EXPECT_NEAR(m.element[r], d, 1.0 / kCount);
    EXPECT_GE(m.block[r], m.element[r]);
  }
  EXPECT_GE(m.union_element, d);
  // The shared part of the gradient makes ranks pick common elements.
  EXPECT_LT(m.union_element, 1 - std::pow(1 - d, n) - tolerance(d, kCount));
  // Layer scales concentrate the survivors: fewer blocks than scattered ones.
  EXPECT_LT(m.block[0], 1 - std::pow(1 - d, 256));
}

// ---- every generator ----------------------------------------------------

class EveryWorkload : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryWorkload, DeterministicInSeedAndRank) {
  const size_t count = 100000;
  WorkloadSpec s = spec_for(GetParam(), 0.05, 3);
  auto a = make(s);
  auto b = make(s);
  s.seed = 8;
  auto other_seed = make(s);
  auto fill = [&](const Workload& w, int rank) {
    std::vector<float> t(count);
    w.fill(rank, TensorView{t.data(), count, DType::kFloat32, DeviceKind::kCpu});
    return t;
  };
  EXPECT_EQ(fill(*a, 1), fill(*b, 1));
  EXPECT_EQ(fill(*a, 1), fill(*a, 1));
  EXPECT_NE(fill(*a, 0), fill(*a, 1));
  EXPECT_NE(fill(*a, 1), fill(*other_seed, 1));
}

TEST_P(EveryWorkload, ValuesAreSmallIntegersOrHalves) {
  const size_t count = 50000;
  WorkloadSpec s = spec_for(GetParam(), 0.2, 2);
  for (DType dtype : {DType::kFloat32, DType::kInt32}) {
    s.dtype = dtype;
    auto w = make(s);
    std::vector<uint32_t> raw(count);
    w->fill(1, TensorView{raw.data(), count, dtype, DeviceKind::kCpu});
    size_t nonzero = 0;
    for (uint32_t bits : raw) {
      double v;
      if (dtype == DType::kFloat32) {
        float f;
        std::memcpy(&f, &bits, 4);
        v = 2.0 * f;  // halves
      } else {
        v = static_cast<int32_t>(bits);
      }
      ASSERT_EQ(v, std::round(v));
      ASSERT_LE(std::fabs(v), 8);
      nonzero += v != 0;
    }
    EXPECT_GT(nonzero, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(Generators, EveryWorkload, ::testing::Values("blocks", "scattered", "zipf", "topk"));

TEST(Workloads, RecordedStatsMatchTheInputs) {
  // prepare_inputs is what the JSON's measured_density comes from.
  const size_t count = 1 << 18;
  auto w = make(spec_for("scattered", 0.01, 3));
  std::vector<float> mine(count), ref(count), scratch(count);
  auto view = [&](std::vector<float>& v) { return TensorView{v.data(), count, DType::kFloat32, DeviceKind::kCpu}; };
  InputStats stats = prepare_inputs(*w, 1, 3, 256, view(mine), view(ref), view(scratch)).stats;
  Measured m = measure(*w, 3, count, 256);
  EXPECT_DOUBLE_EQ(stats.element_density, *std::max_element(m.element.begin(), m.element.end()));
  EXPECT_DOUBLE_EQ(stats.block_density, *std::max_element(m.block.begin(), m.block.end()));
  EXPECT_DOUBLE_EQ(stats.union_block_density, m.union_block);
  EXPECT_DOUBLE_EQ(stats.union_element_density, m.union_element);
  EXPECT_EQ(mine, m.tensors[1]);
}

// ---- workload choice and options ------------------------------------------

TEST(WorkloadChoice, ParsesNamesAndParameters) {
  auto zipf = choose_workload("zipf", "", 2, DType::kFloat32);
  ASSERT_TRUE(zipf.is_ok());
  EXPECT_EQ(zipf.value().shape.label, "zipf:1.1");
  auto steep = choose_workload("zipf:1.5", "", 2, DType::kFloat32);
  ASSERT_TRUE(steep.is_ok());
  EXPECT_DOUBLE_EQ(steep.value().shape.zipf_alpha, 1.5);
  EXPECT_EQ(steep.value().shape.label, "zipf:1.5");
  for (const char* bad : {"zipf:x", "zipf:0", "uniform", "topk:3", "preset:nope", "preset:"}) {
    auto r = choose_workload(bad, "", 2, DType::kFloat32);
    EXPECT_EQ(r.status().code(), Code::kUsage) << bad;
  }
  EXPECT_NE(choose_workload("preset:nope", "", 2, DType::kFloat32).status().message().find("vgg16-topk"),
            std::string::npos);
  EXPECT_EQ(choose_workload("blocks", "/tmp", 2, DType::kFloat32).status().code(), Code::kUsage);
}

TEST(WorkloadChoice, EveryPresetMakesAWorkload) {
  for (const Preset& p : presets()) {
    auto c = choose_workload("preset:" + p.name, "", 2, DType::kFloat32);
    ASSERT_TRUE(c.is_ok()) << p.name;
    EXPECT_EQ(c.value().shape.label, "preset:" + p.name);
    EXPECT_EQ(*c.value().size_bytes, p.elements * 4);
    EXPECT_DOUBLE_EQ(*c.value().density, p.density);
    WorkloadSpec s = c.value().shape;
    s.density = p.density;
    s.nodes = 2;
    auto w = make(s);
    // A scaled-down replay keeps the preset's density.
    const size_t count = 1 << 16;
    Measured m = measure(*w, 2, count, 256);
    EXPECT_NEAR(m.element[0], p.density, 0.05 + p.density * 0.2) << p.name;
  }
}

AllreduceOptions options_for(const std::string& workload) {
  AllreduceOptions o;
  o.workload_text = workload;
  o.nodes = 2;
  o.iters = 1;
  return o;
}

Result<RunPlan> plan_of(const AllreduceOptions& o) { return plan_allreduce(o, 1, std::nullopt); }

TEST(WorkloadOptions, PresetFixesSizeAndDensity) {
  auto plan = plan_of(options_for("preset:vgg16-topk"));
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  EXPECT_EQ(plan.value().sizes, std::vector<uint64_t>{14728266ull * 4});
  EXPECT_DOUBLE_EQ(plan.value().base.density, 0.02);
  EXPECT_EQ(plan.value().workload.label, "preset:vgg16-topk");
  EXPECT_EQ(plan.value().base.workload, "preset:vgg16-topk");
  EXPECT_EQ(plan.value().workload.name, "topk");

  AllreduceOptions scaled = options_for("preset:deeplight");
  scaled.min_bytes_text = scaled.max_bytes_text = "1M";
  scaled.sizes_given = true;
  auto scaled_plan = plan_of(scaled);
  ASSERT_TRUE(scaled_plan.is_ok()) << scaled_plan.status().message();
  EXPECT_EQ(scaled_plan.value().sizes, std::vector<uint64_t>{1 << 20});
  EXPECT_DOUBLE_EQ(scaled_plan.value().base.density, 0.01);

  AllreduceOptions clash = options_for("preset:vgg16-topk");
  clash.density = 0.5;
  clash.density_given = true;
  Status s = plan_of(clash).status();
  EXPECT_EQ(s.code(), Code::kUsage);
  EXPECT_NE(s.message().find("drop --density"), std::string::npos);
}

// ---- npy ----------------------------------------------------------------

using testing::write_npy;

std::string npy_dir(const std::string& name) {
  std::string dir = testing::temp_path(name);
  std::filesystem::create_directories(dir);
  return dir;
}

std::vector<float> gradient(int rank, size_t count) {
  std::vector<float> g(count, 0.0f);
  for (size_t i = 0; i < count; ++i)
    if ((i * 7 + static_cast<size_t>(rank) * 3) % 11 == 0) g[i] = 0.125f * static_cast<float>(i % 5 + 1);
  g[1] = -0.0f;  // zero, as the block scan sees it
  return g;
}

TEST(NpyWorkload, RoundTripKeepsEachRanksNonZeros) {
  const std::string dir = npy_dir("npy_roundtrip");
  const size_t rows = 40, cols = 25, count = rows * cols;
  for (int r = 0; r < 3; ++r) {
    auto g = gradient(r, count);
    // Rank 1 as a 2-D C-order array, rank 2 in format 2.0: both flatten alike.
    const std::string shape = r == 1 ? "(40, 25)" : "(1000,)";
    write_npy(npy_rank_path(dir, r), "<f4", shape, g.data(), count * 4, false, r == 2 ? 2 : 1);
  }
  auto choice = choose_workload("npy", dir, 3, DType::kFloat32);
  ASSERT_TRUE(choice.is_ok()) << choice.status().message();
  EXPECT_EQ(*choice.value().size_bytes, count * 4);
  EXPECT_TRUE(choice.value().size_is_strict);

  WorkloadSpec s = choice.value().shape;
  s.nodes = 3;
  auto w = make(s);
  double density_sum = 0;
  for (int r = 0; r < 3; ++r) {
    const auto g = gradient(r, count);
    std::vector<float> t(count);
    w->fill(r, TensorView{t.data(), count, DType::kFloat32, DeviceKind::kCpu});
    size_t nonzero = 0;
    for (size_t i = 0; i < count; ++i) {
      ASSERT_EQ(t[i] != 0, g[i] != 0) << "rank " << r << " element " << i;
      nonzero += g[i] != 0;
    }
    density_sum += static_cast<double>(nonzero) / count;
  }
  EXPECT_NEAR(*choice.value().density, density_sum / 3, 1e-12);
}

Status npy_error(const std::string& dir, int nodes, DType dtype = DType::kFloat32) {
  return choose_workload("npy", dir, nodes, dtype).status();
}

TEST(NpyWorkload, ErrorsSayWhatToDo) {
  std::vector<float> g(100, 1.0f);
  std::vector<double> wide(100, 1.0);

  EXPECT_NE(npy_error("", 1).message().find("--input DIR"), std::string::npos);

  const std::string missing = npy_dir("npy_missing");
  write_npy(npy_rank_path(missing, 0), "<f4", "(100,)", g.data(), 400);
  Status s = npy_error(missing, 2);
  EXPECT_EQ(s.code(), Code::kUsage);
  EXPECT_NE(s.message().find("rank1.npy is missing"), std::string::npos) << s.message();
  // World size not known yet (external launcher, no --nodes): the files that
  // exist are read; the runner checks them against the world later.
  EXPECT_TRUE(npy_error(missing, 0).is_ok());
  EXPECT_NE(npy_error(npy_dir("npy_empty"), 0).message().find("rank0.npy is missing"), std::string::npos);

  const std::string f8 = npy_dir("npy_f8");
  write_npy(npy_rank_path(f8, 0), "<f8", "(100,)", wide.data(), 800);
  s = npy_error(f8, 1);
  EXPECT_EQ(s.code(), Code::kUsage);
  EXPECT_NE(s.message().find("astype('<f4')"), std::string::npos) << s.message();
  EXPECT_NE(npy_error(f8, 1, DType::kInt32).message().find("'<i4'"), std::string::npos);

  const std::string sizes = npy_dir("npy_sizes");
  write_npy(npy_rank_path(sizes, 0), "<f4", "(100,)", g.data(), 400);
  write_npy(npy_rank_path(sizes, 1), "<f4", "(50,)", g.data(), 200);
  s = npy_error(sizes, 2);
  EXPECT_EQ(s.code(), Code::kUsage);
  EXPECT_NE(s.message().find("same number of elements"), std::string::npos) << s.message();

  const std::string fortran = npy_dir("npy_fortran");
  write_npy(npy_rank_path(fortran, 0), "<f4", "(10, 10)", g.data(), 400, true);
  EXPECT_NE(npy_error(fortran, 1).message().find("ascontiguousarray"), std::string::npos);

  const std::string truncated = npy_dir("npy_truncated");
  write_npy(npy_rank_path(truncated, 0), "<f4", "(100,)", g.data(), 396);
  EXPECT_NE(npy_error(truncated, 1).message().find("truncated"), std::string::npos);

  const std::string junk = npy_dir("npy_junk");
  std::ofstream(npy_rank_path(junk, 0)) << "not numpy at all";
  EXPECT_NE(npy_error(junk, 1).message().find("numpy.save"), std::string::npos);
}

TEST(NpyWorkload, RequestedSizeMustMatchTheFiles) {
  const std::string dir = npy_dir("npy_size_rule");
  std::vector<float> g(1000, 0.5f);
  for (int r = 0; r < 2; ++r) write_npy(npy_rank_path(dir, r), "<f4", "(1000,)", g.data(), 4000);

  AllreduceOptions o = options_for("npy");
  o.input_dir = dir;
  auto plan = plan_of(o);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  EXPECT_EQ(plan.value().sizes, std::vector<uint64_t>{4000});
  EXPECT_DOUBLE_EQ(plan.value().base.density, 1.0);

  AllreduceOptions same = options_for("npy");
  same.input_dir = dir;
  same.min_bytes_text = same.max_bytes_text = "4000";
  same.sizes_given = true;
  EXPECT_TRUE(plan_of(same).is_ok());

  AllreduceOptions other = options_for("npy");
  other.input_dir = dir;
  other.min_bytes_text = other.max_bytes_text = "1M";
  other.sizes_given = true;
  Status s = plan_of(other).status();
  EXPECT_EQ(s.code(), Code::kUsage);
  EXPECT_NE(s.message().find("set both to 4000"), std::string::npos) << s.message();
}

// ---- end to end -----------------------------------------------------------

TEST(WorkloadsCli, RecordsTheWorkloadAndChecksResults) {
  struct Case {
    std::vector<std::string> args;
    std::string label;
  };
  const std::string dir = npy_dir("npy_cli");
  for (int r = 0; r < 3; ++r) {
    auto g = gradient(r, 65536);
    write_npy(npy_rank_path(dir, r), "<f4", "(65536,)", g.data(), g.size() * 4);
  }
  const std::vector<Case> cases = {
      {{"--workload", "scattered", "--density", "0.01", "-b", "256K", "-e", "256K"}, "scattered"},
      {{"--workload", "zipf:1.2", "-b", "256K", "-e", "256K"}, "zipf:1.2"},
      {{"--workload", "topk", "--density", "0.02", "-b", "256K", "-e", "256K"}, "topk"},
      {{"--workload", "preset:bert-squad", "-b", "1M", "-e", "1M"}, "preset:bert-squad"},
      {{"--workload", "npy", "--input", dir}, "npy"},
  };
  for (const auto& c : cases) {
    const std::string json = testing::temp_path("workload.json");
    std::vector<std::string> args = {"allreduce", "--nodes", "3", "-n", "2", "-w", "1", "-J", json, "--algo",
                                     "omni,ring,ps,allgather,sparcml-split,sparcml-recdbl"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    auto r = testing::run_cli(args);
    ASSERT_EQ(r.exit_code, 0) << c.label << ": " << r.err;
    auto doc = testing::read_json(json);
    EXPECT_EQ(doc["configuration"]["workload"], c.label);
    for (const auto& rec : doc["results"]) {
      EXPECT_EQ(rec["config"]["workload"], c.label);
      if (!rec["skipped"].get<bool>()) {
        EXPECT_TRUE(rec["correct"].get<bool>()) << c.label << " " << rec["algo"];
      }
    }
  }
}

TEST(WorkloadsCli, NpySizeMismatchIsAUsageError) {
  const std::string dir = npy_dir("npy_cli_mismatch");
  std::vector<float> g(1000, 1.0f);
  for (int r = 0; r < 2; ++r) write_npy(npy_rank_path(dir, r), "<f4", "(1000,)", g.data(), 4000);
  auto r = testing::run_cli({"allreduce", "--nodes", "2", "--workload", "npy", "--input", dir, "-b", "8K", "-e", "8K"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("set both to 4000"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace omnib
