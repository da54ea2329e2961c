// Ok-Topk's balanced split: every rank, adding the same histogram counts in
// its own order, must place the same boundaries, and the regions must hold
// equal shares of the non-zeros within the stated tolerance, on skewed
// inputs too.
#include "baselines/common/balanced_split.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace omnib {
namespace {

using Tensor = std::vector<uint32_t>;
constexpr uint32_t kOne = 0x3f800000;  // 1.0f
constexpr size_t kPiece = 300;          // cells of one piece of a rank's counts

// Runs the split's rounds the way the ranks of oktopk do: every rank counts
// its tensor on the round's cells, and rank r adds the counts starting with
// its own, then those of r+1, r+2, ... (the order they might arrive in),
// whole or in pieces. Returns one finished split per rank.
std::vector<BalancedSplit> split_on_every_rank(const std::vector<Tensor>& tensors, int parts) {
  const auto ranks = tensors.size();
  std::vector<BalancedSplit> splits(ranks);
  for (auto& s : splits) s.reset(tensors[0].size(), parts);
  for (int round = 0; round < 2; ++round) {
    std::vector<std::vector<uint32_t>> counts(ranks);
    for (size_t r = 0; r < ranks; ++r) {
      EXPECT_EQ(splits[r].round_cells().size(), splits[0].round_cells().size()) << "rank " << r;
      counts[r].resize(splits[r].round_cells().size());
      count_nonzeros(tensors[r].data(), 4, splits[r].round_cells(), counts[r].data());
    }
    std::vector<bool> more(ranks);
    for (size_t r = 0; r < ranks; ++r) {
      for (size_t k = 0; k < ranks; ++k) {
        const std::vector<uint32_t>& c = counts[(r + k) % ranks];
        if (r % 2 == 0) {
          splits[r].add_counts(c.data());
          continue;
        }
        // Odd ranks take each rank's counts in pieces, as frames bring them.
        for (size_t first = 0; first < c.size(); first += kPiece)
          splits[r].add_counts(first, c.data() + first, std::min(kPiece, c.size() - first));
      }
      more[r] = splits[r].finish_round();
      EXPECT_EQ(more[r], more[0]) << "rank " << r << " disagrees about a fine round";
    }
    if (!more[0]) return splits;
  }
  ADD_FAILURE() << "more than two rounds";
  return splits;
}

// Non-zeros of all tensors in [begin, end).
uint64_t nonzeros_in(const std::vector<Tensor>& tensors, uint64_t begin, uint64_t end) {
  uint64_t n = 0;
  for (const auto& t : tensors)
    for (uint64_t i = begin; i < end; ++i) n += t[i] != 0 ? 1 : 0;
  return n;
}

void expect_same_and_balanced(const std::vector<Tensor>& tensors, int parts) {
  const auto splits = split_on_every_rank(tensors, parts);
  const BalancedSplit& s = splits[0];
  for (size_t r = 1; r < splits.size(); ++r) EXPECT_EQ(splits[r].boundaries(), s.boundaries()) << "rank " << r;
  const auto& b = s.boundaries();
  ASSERT_EQ(b.size(), static_cast<size_t>(parts) + 1);
  EXPECT_EQ(b.front(), 0u);
  EXPECT_EQ(b.back(), tensors[0].size());
  for (int j = 0; j < parts; ++j) EXPECT_LE(b[j], b[j + 1]);
  const uint64_t total = nonzeros_in(tensors, 0, tensors[0].size());
  EXPECT_EQ(s.total(), total);
  // Every region within max_deviation() of total / parts (scaled by parts
  // to stay in integers).
  const auto p = static_cast<int64_t>(parts);
  for (int j = 0; j < parts; ++j) {
    const auto region = static_cast<int64_t>(nonzeros_in(tensors, b[j], b[j + 1]));
    EXPECT_LE(std::llabs(region * p - static_cast<int64_t>(total)), static_cast<int64_t>(s.max_deviation()) * p)
        << "region " << j << " holds " << region << " of " << total << " non-zeros over " << parts << " regions";
  }
}

// `ranks` tensors of `count` elements; element i of rank r is non-zero when
// nonzero(r, i, rng).
std::vector<Tensor> make(int ranks, size_t count, const std::function<bool(int, size_t, std::mt19937&)>& nonzero) {
  std::mt19937 rng(7);
  std::vector<Tensor> out(static_cast<size_t>(ranks), Tensor(count, 0));
  for (int r = 0; r < ranks; ++r)
    for (size_t i = 0; i < count; ++i)
      if (nonzero(r, i, rng)) out[static_cast<size_t>(r)][i] = kOne;
  return out;
}

constexpr size_t kCount = 1 << 20;

class BalancedSplitParts : public ::testing::TestWithParam<int> {};

TEST_P(BalancedSplitParts, UniformInputs) {
  expect_same_and_balanced(make(GetParam(), kCount, [](int, size_t, std::mt19937& g) { return g() % 100 == 0; }),
                           GetParam());
}

// Every non-zero in the first 0.5% of the index space: the coarse buckets
// cannot balance it, the fine round must.
TEST_P(BalancedSplitParts, NonZerosCrowdedAtTheStart) {
  const auto tensors =
      make(GetParam(), kCount, [](int, size_t i, std::mt19937& g) { return i < kCount / 200 && g() % 3 == 0; });
  expect_same_and_balanced(tensors, GetParam());
  // And the guarantee is worth having: within 2% of a region's share.
  const auto s = split_on_every_rank(tensors, GetParam());
  EXPECT_LE(s[0].max_deviation() * 50, s[0].total() / static_cast<uint64_t>(GetParam()));
}

// A power law over the index space (frequency-sorted embedding rows).
TEST_P(BalancedSplitParts, PowerLawInputs) {
  expect_same_and_balanced(make(GetParam(), kCount,
                                [](int, size_t i, std::mt19937& g) {
                                  const double p = 0.5 / std::pow(static_cast<double>(i + 1), 0.6);
                                  return std::uniform_real_distribution<double>(0, 1)(g) < p;
                                }),
                           GetParam());
}

// One rank dense in the second half, the others empty.
TEST_P(BalancedSplitParts, OneRankHoldsEverything) {
  expect_same_and_balanced(make(GetParam(), kCount, [](int r, size_t i, std::mt19937&) { return r == 0 && i >= kCount / 2; }),
                           GetParam());
}

// Non-zeros in whole blocks of 256, as the default workload makes them.
TEST_P(BalancedSplitParts, LumpyBlocks) {
  std::mt19937 pick(11);
  std::vector<std::vector<bool>> block_on(static_cast<size_t>(GetParam()), std::vector<bool>(kCount / 256));
  for (auto& blocks : block_on)
    for (size_t b = 0; b < blocks.size(); ++b) blocks[b] = pick() % 100 == 0;
  expect_same_and_balanced(make(GetParam(), kCount,
                                [&](int r, size_t i, std::mt19937&) { return block_on[static_cast<size_t>(r)][i / 256]; }),
                           GetParam());
}

INSTANTIATE_TEST_SUITE_P(Regions, BalancedSplitParts, ::testing::Values(2, 3, 4, 5, 8));

TEST(BalancedSplit, NoNonZerosGivesAnEvenSplit) {
  const auto splits = split_on_every_rank(std::vector<Tensor>(3, Tensor(1000, 0)), 3);
  EXPECT_EQ(splits[0].boundaries(), (std::vector<uint64_t>{0, 333, 666, 1000}));
}

TEST(BalancedSplit, FewerElementsThanRegions) {
  expect_same_and_balanced(make(5, 3, [](int r, size_t i, std::mt19937&) { return (r + i) % 2 == 0; }), 5);
  expect_same_and_balanced(make(4, 1, [](int, size_t, std::mt19937&) { return true; }), 4);
}

TEST(BalancedSplit, CountsNonZeroElementsPerCellAtTheirSize) {
  const std::vector<Slice> cells{{0, 3}, {3, 2}, {5, 3}};
  auto counts_of = [&](const void* t, size_t elem_size) {
    std::vector<uint32_t> counts(cells.size());
    count_nonzeros(t, elem_size, cells, counts.data());
    return counts;
  };
  const Tensor words{0, kOne, 0x80000000u /* -0.0f: a bit is set */, 0, 5, 0, 0, 0};
  EXPECT_EQ(counts_of(words.data(), 4), (std::vector<uint32_t>{2, 1, 0}));
  const std::vector<uint16_t> halves{0, 0x3c00, 0x8000 /* -0.0: a bit is set */, 0, 5, 0, 0, 0x0100};
  EXPECT_EQ(counts_of(halves.data(), 2), (std::vector<uint32_t>{2, 1, 1}));
}

}  // namespace
}  // namespace omnib
