#include "engine/omni/shard_aggregator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <random>

#include "engine/blocks/block_scan.h"
#include "engine/base/float16.h"
#include "tests/support/batch_payload.h"

namespace omnib {
namespace {

// The bytes of v as an element of `dtype` (float, bf16 or half).
std::vector<uint8_t> element_bytes(float v, DType dtype) {
  std::vector<uint8_t> out(dtype_size(dtype));
  const uint16_t narrow = dtype == DType::kBFloat16 ? float_to_bf16(v) : float_to_half(v);
  std::memcpy(out.data(), dtype == DType::kFloat32 ? static_cast<const void*>(&v) : &narrow, out.size());
  return out;
}

// Builds a received frame holding `blocks` (index -> fill value) of a tensor
// of `dtype` elements, announcing `next`.
Frame make_batch(const std::map<uint64_t, float>& blocks, uint64_t next, const BlockLayout& layout,
                 BatchView& view, DType dtype = DType::kFloat32) {
  Frame f;
  BatchHeader h{static_cast<uint32_t>(blocks.size()), 0, next};
  f.payload.resize(sizeof(h));
  std::memcpy(f.payload.data(), &h, sizeof(h));
  for (const auto& [idx, v] : blocks) {
    auto* p = reinterpret_cast<const uint8_t*>(&idx);
    f.payload.insert(f.payload.end(), p, p + 8);
  }
  for (const auto& [idx, v] : blocks) {
    const std::vector<uint8_t> e = element_bytes(v, dtype);
    for (size_t i = 0; i < layout.block_length(idx); ++i) f.payload.insert(f.payload.end(), e.begin(), e.end());
  }
  EXPECT_TRUE(decode_batch(f.payload, layout, dtype_size(dtype), ShardMap(layout.num_blocks(), 1, ShardLayout::kContiguous, 1), 0, view).is_ok());
  return f;
}

float value_of(const ResultBatch& out, size_t i, size_t block_elems) {
  float v;
  std::memcpy(&v, out.values.data() + i * block_elems * 4, 4);
  return v;
}

class ShardAggregatorTest : public ::testing::Test {
 protected:
  BlockLayout layout{40, 4};  // 10 blocks of 4 floats
  ShardAggregator agg{3, DType::kFloat32};
  void SetUp() override { agg.reset(layout); }
  void push(int w, std::map<uint64_t, float> blocks, uint64_t next) {
    BatchView view;
    Frame f = make_batch(blocks, next, layout, view);
    ASSERT_TRUE(agg.push(w, std::move(f), std::move(view)).is_ok());
  }
};

TEST_F(ShardAggregatorTest, WaitsOnlyForWorkersHoldingTheNextBlock) {
  ResultBatch out;
  int waiting = -1;
  push(0, {{2, 1.0f}}, 7);
  EXPECT_EQ(agg.advance(out, ResultLimit{100}, &waiting), ShardAggregator::Progress::kNeedInput);
  EXPECT_EQ(waiting, 1);  // nothing known about worker 1 yet
  push(1, {{5, 10.0f}}, kEndOfStream);
  push(2, {{2, 100.0f}}, kEndOfStream);
  // Block 2 is held by workers 0 and 2 only; block 5 by worker 1 only. Block
  // 7 starts worker 0's next batch: what is done goes out first.
  EXPECT_EQ(agg.advance(out, ResultLimit{100}, &waiting), ShardAggregator::Progress::kFlush);
  ASSERT_EQ(out.indices, (std::vector<uint64_t>{2, 5}));
  EXPECT_EQ(value_of(out, 0, 4), 101.0f);
  EXPECT_EQ(value_of(out, 1, 4), 10.0f);
  out.clear();
  EXPECT_EQ(agg.advance(out, ResultLimit{100}, &waiting), ShardAggregator::Progress::kNeedInput);
  EXPECT_EQ(waiting, 0);  // worker 0 announced block 7, not yet delivered
  EXPECT_TRUE(out.indices.empty());
  push(0, {{7, 2.0f}}, kEndOfStream);
  EXPECT_EQ(agg.advance(out, ResultLimit{100}, &waiting), ShardAggregator::Progress::kDone);
  EXPECT_EQ(out.indices, (std::vector<uint64_t>{7}));
  EXPECT_EQ(agg.global_next(), kEndOfStream);
}

TEST_F(ShardAggregatorTest, EmptyStreamsFinishImmediately) {
  for (int w = 0; w < 3; ++w) push(w, {}, kEndOfStream);
  ResultBatch out;
  int waiting = -1;
  EXPECT_EQ(agg.advance(out, ResultLimit{100}, &waiting), ShardAggregator::Progress::kDone);
  EXPECT_TRUE(out.indices.empty());
}

TEST_F(ShardAggregatorTest, StopsAtBatchLimitAndResumes) {
  push(0, {{0, 1.0f}, {1, 1.0f}, {2, 1.0f}}, kEndOfStream);
  push(1, {}, kEndOfStream);
  push(2, {{1, 1.0f}}, kEndOfStream);
  ResultBatch out;
  int waiting = -1;
  EXPECT_EQ(agg.advance(out, ResultLimit{2}, &waiting), ShardAggregator::Progress::kFlush);
  EXPECT_EQ(out.indices, (std::vector<uint64_t>{0, 1}));
  EXPECT_EQ(value_of(out, 1, 4), 2.0f);
  EXPECT_TRUE(out.nonzeros.empty());  // whole blocks are never counted
  out.clear();
  EXPECT_EQ(agg.advance(out, ResultLimit{2}, &waiting), ShardAggregator::Progress::kDone);
  EXPECT_EQ(out.indices, (std::vector<uint64_t>{2}));
}

// Under a sparse policy a result batch ends at its weight, each block
// weighed by its sum's non-zeros (a sum that cancels weighs its bitmap
// alone), and the counts travel with the batch for its encoding.
TEST_F(ShardAggregatorTest, SparseResultsEndAtTheirWeightAndCarryTheirCounts) {
  push(0, {{0, 1.0f}, {1, 1.0f}, {2, 1.0f}, {3, 1.0f}, {4, 1.0f}, {5, 1.0f}}, kEndOfStream);
  push(1, {}, kEndOfStream);
  push(2, {{1, -1.0f}}, kEndOfStream);
  ResultBatch out;
  int waiting = -1;
  // A block of 4 floats weighs 1 + 4 * nonzeros under bitmap: 17 whole, 1 cancelled.
  const ResultLimit limit{100, 40, EncodingPolicy::kBitmap};
  EXPECT_EQ(agg.advance(out, limit, &waiting), ShardAggregator::Progress::kFlush);
  EXPECT_EQ(out.indices, (std::vector<uint64_t>{0, 1, 2, 3}));
  EXPECT_EQ(out.nonzeros, (std::vector<uint32_t>{4, 0, 4, 4}));
  EXPECT_EQ(out.weight, 17u + 1u + 17u + 17u);
  out.clear();
  EXPECT_EQ(agg.advance(out, limit, &waiting), ShardAggregator::Progress::kDone);
  EXPECT_EQ(out.indices, (std::vector<uint64_t>{4, 5}));
  // The blocks' cap still holds whatever the weight.
  agg.reset(layout);
  for (int w = 0; w < 3; ++w) push(w, w == 0 ? std::map<uint64_t, float>{{0, 1.0f}, {1, 1.0f}, {2, 1.0f}} : std::map<uint64_t, float>{}, kEndOfStream);
  out.clear();
  EXPECT_EQ(agg.advance(out, ResultLimit{2, 1000, EncodingPolicy::kBitmap}, &waiting), ShardAggregator::Progress::kFlush);
  EXPECT_EQ(out.indices, (std::vector<uint64_t>{0, 1}));
}

TEST_F(ShardAggregatorTest, SumsInRankOrderAcrossBatches) {
  push(0, {{0, 1.0f}}, 3);
  push(1, {{0, 2.0f}, {3, 5.0f}}, kEndOfStream);
  push(2, {}, kEndOfStream);
  push(0, {{3, 4.0f}}, kEndOfStream);
  ResultBatch out;
  int waiting = -1;
  EXPECT_EQ(agg.advance(out, ResultLimit{100}, &waiting), ShardAggregator::Progress::kFlush);
  EXPECT_EQ(out.indices, (std::vector<uint64_t>{0}));
  EXPECT_EQ(value_of(out, 0, 4), 3.0f);
  out.clear();
  EXPECT_EQ(agg.advance(out, ResultLimit{100}, &waiting), ShardAggregator::Progress::kDone);
  EXPECT_EQ(out.indices, (std::vector<uint64_t>{3}));
  EXPECT_EQ(value_of(out, 0, 4), 9.0f);
}

// Summed in place (the direct route into its output), every block lands at
// its place in the tensor, with the same sums and the same batches, and the
// batch's own values stay empty.
TEST_F(ShardAggregatorTest, SumsInPlaceLandWhereTheirBlocksAre) {
  push(0, {{0, 1.0f}}, 3);
  push(1, {{0, 2.0f}, {3, 5.0f}}, kEndOfStream);
  push(2, {}, kEndOfStream);
  push(0, {{3, 4.0f}}, kEndOfStream);
  std::vector<float> tensor(40, -1.0f);
  auto* at = reinterpret_cast<uint8_t*>(tensor.data());
  ResultBatch out;
  int waiting = -1;
  EXPECT_EQ(agg.advance(out, ResultLimit{100}, &waiting, at), ShardAggregator::Progress::kFlush);
  EXPECT_EQ(out.indices, (std::vector<uint64_t>{0}));
  EXPECT_TRUE(out.values.empty());
  out.clear();
  EXPECT_EQ(agg.advance(out, ResultLimit{100}, &waiting, at), ShardAggregator::Progress::kDone);
  EXPECT_EQ(out.indices, (std::vector<uint64_t>{3}));
  std::vector<float> want(40, -1.0f);
  for (int i = 0; i < 4; ++i) {
    want[i] = 3.0f;
    want[12 + i] = 9.0f;
  }
  EXPECT_EQ(tensor, want);
}

// The result batches (and so the frames and wire bytes of a run) depend on
// the data only: input that arrives all at once and input that arrives just
// in time give the same batches.
TEST_F(ShardAggregatorTest, BatchesDoNotDependOnArrivalTiming) {
  const std::vector<std::vector<std::pair<std::map<uint64_t, float>, uint64_t>>> streams = {
      {{{{0, 1.0f}, {2, 1.0f}}, 4}, {{{4, 1.0f}, {6, 1.0f}}, 9}, {{{9, 1.0f}}, kEndOfStream}},
      {{{{1, 1.0f}, {2, 1.0f}, {3, 1.0f}}, 7}, {{{7, 1.0f}, {8, 1.0f}}, kEndOfStream}},
      {{{{5, 1.0f}}, kEndOfStream}},
  };
  auto drain = [&](bool all_first) {
    agg.reset(layout);
    std::vector<size_t> next_batch(streams.size(), 0);
    auto feed = [&](size_t w) {
      const auto& [blocks, next] = streams[w][next_batch[w]++];
      push(static_cast<int>(w), blocks, next);
    };
    if (all_first)
      for (size_t w = 0; w < streams.size(); ++w)
        while (next_batch[w] < streams[w].size()) feed(w);
    std::vector<std::vector<uint64_t>> batches;
    ResultBatch out;
    int waiting = -1;
    while (true) {
      auto p = agg.advance(out, ResultLimit{3}, &waiting);
      if (p == ShardAggregator::Progress::kNeedInput) {
        EXPECT_TRUE(out.indices.empty());
        feed(static_cast<size_t>(waiting));
        continue;
      }
      batches.push_back(out.indices);
      out.clear();
      if (p == ShardAggregator::Progress::kDone) break;
    }
    return batches;
  };
  const auto eager = drain(true);
  const auto lazy = drain(false);
  EXPECT_EQ(eager, lazy);
  EXPECT_GT(eager.size(), 2u);
}

TEST_F(ShardAggregatorTest, RejectsABatchThatBreaksTheLookAhead) {
  push(0, {{0, 1.0f}}, 3);
  BatchView view;
  Frame f = make_batch({{4, 1.0f}}, kEndOfStream, layout, view);  // announced 3, sent 4
  EXPECT_FALSE(agg.push(0, std::move(f), std::move(view)).is_ok());
  Frame g = make_batch({}, kEndOfStream, layout, view);
  push(1, {}, kEndOfStream);
  BatchView view2;
  Frame h = make_batch({{1, 1.0f}}, kEndOfStream, layout, view2);  // after END
  EXPECT_FALSE(agg.push(1, std::move(h), std::move(view2)).is_ok());
}

TEST_F(ShardAggregatorTest, ResetStartsACleanCollective) {
  push(0, {{0, 1.0f}}, kEndOfStream);
  agg.reset(layout);
  for (int w = 0; w < 3; ++w) push(w, {}, kEndOfStream);
  ResultBatch out;
  int waiting = -1;
  EXPECT_EQ(agg.advance(out, ResultLimit{100}, &waiting), ShardAggregator::Progress::kDone);
  EXPECT_TRUE(out.indices.empty());
}

// 16-bit blocks are summed in fp32 and rounded once. In bf16 (8 significant
// bits) 256 + 1 rounds back to 256 (a tie, to even), so summing pairwise in
// bf16 gives 256 + 1 + 1 = 256; the exact 258 is a bf16 number. Half (11
// bits) has the same at 2048 + 1 + 1.
TEST(ShardAggregator16Bit, SumsInFp32AndRoundsOnce) {
  for (auto [dtype, big] : {std::pair{DType::kBFloat16, 256.0f}, std::pair{DType::kFloat16, 2048.0f}}) {
    SCOPED_TRACE(std::string(dtype_name(dtype)));
    const BlockLayout layout(8, 4);
    ShardAggregator agg(3, dtype);
    agg.reset(layout);
    int w = 0;
    for (float v : {big, 1.0f, 1.0f}) {
      BatchView view;
      // Block 0 on every worker; block 1 on worker 0 only (copied as it is).
      Frame f = make_batch(w == 0 ? std::map<uint64_t, float>{{0, v}, {1, 3.0f}} : std::map<uint64_t, float>{{0, v}},
                           kEndOfStream, layout, view, dtype);
      ASSERT_TRUE(agg.push(w++, std::move(f), std::move(view)).is_ok());
    }
    ResultBatch out;
    int waiting = -1;
    ASSERT_EQ(agg.advance(out, ResultLimit{100}, &waiting), ShardAggregator::Progress::kDone);
    ASSERT_EQ(out.indices, (std::vector<uint64_t>{0, 1}));
    ASSERT_EQ(out.values.size(), 16u);
    EXPECT_EQ(std::vector<uint8_t>(out.values.data(), out.values.data() + 2), element_bytes(big + 2, dtype));
    EXPECT_EQ(std::vector<uint8_t>(out.values.data() + 6, out.values.data() + 8), element_bytes(big + 2, dtype));
    EXPECT_EQ(std::vector<uint8_t>(out.values.data() + 8, out.values.data() + 10), element_bytes(3.0f, dtype));
  }
}

// A worker's tensor cut into batches (each about `per_batch` non-zero
// blocks) in `encoding`, decoded as a shard receives them.
struct Stream {
  std::vector<Frame> frames;
  std::vector<BatchView> views;
};
Stream make_stream(const std::vector<float>& tensor, const BlockLayout& layout, BlockEncoding encoding,
                   size_t per_batch) {
  Stream s;
  const std::vector<uint64_t> blocks = nonzero_blocks(tensor.data(), 4, layout);
  const ShardMap one(layout.num_blocks(), 1, ShardLayout::kContiguous, 1);
  for (size_t at = 0; at == 0 || at < blocks.size(); at += per_batch) {
    const size_t n = std::min(per_batch, blocks.size() - at);
    const std::span<const uint64_t> batch(blocks.data() + at, n);
    const BlockEncoding e = n == 0 ? BlockEncoding::kBlocks : encoding;
    const std::vector<uint8_t> payload = build_batch(e, batch, reinterpret_cast<const uint8_t*>(tensor.data()), layout,
                                                     4, at + n < blocks.size() ? blocks[at + n] : kEndOfStream)
                                             .payload;
    Frame f;
    f.payload.assign(payload.begin(), payload.end());
    BatchView view;
    EXPECT_TRUE(decode_batch(f.payload, layout, 4, one, 0, view).is_ok());
    s.frames.push_back(std::move(f));
    s.views.push_back(std::move(view));
    if (blocks.empty()) break;
  }
  return s;
}

// A worker's whole tensor (fp32) as one batch in `encoding`.
Frame make_encoded(const std::vector<float>& tensor, const BlockLayout& layout, BlockEncoding encoding,
                   BatchView& view) {
  Stream s = make_stream(tensor, layout, encoding, tensor.size());
  view = std::move(s.views[0]);
  return std::move(s.frames[0]);
}

// The route's estimate of each sum's non-zeros: the holders' counts when
// all sent the block sparse (exact for one holder; capped at the length),
// uncounted when one sent it whole.
TEST(ShardAggregatorCounts, EstimatesFromTheHoldersSparseCounts) {
  const BlockLayout layout(16, 4);  // 4 blocks of 4
  std::vector<float> a(16, 0.0f), b(16, 0.0f);
  a[0] = 1;                          // block 0: a alone, 1 non-zero
  a[4] = 1, b[5] = 2;                // block 1: both, 1 + 1
  a[8] = a[9] = a[10] = 1;           // block 2: both, 3 + 3 capped at 4
  b[8] = b[9] = b[11] = 1;
  b[12] = b[13] = 5;                 // block 3: b alone, 2
  for (BlockEncoding eb : {BlockEncoding::kCoo, BlockEncoding::kBlocks}) {
    ShardAggregator agg(2, DType::kFloat32);
    agg.reset(layout);
    BatchView va, vb;
    Frame fa = make_encoded(a, layout, BlockEncoding::kBitmap, va);
    Frame fb = make_encoded(b, layout, eb, vb);
    ASSERT_TRUE(agg.push(0, std::move(fa), std::move(va)).is_ok());
    ASSERT_TRUE(agg.push(1, std::move(fb), std::move(vb)).is_ok());
    ResultBatch out;
    int waiting = -1;
    ASSERT_EQ(agg.advance(out, ResultLimit{100}, &waiting), ShardAggregator::Progress::kDone);
    ASSERT_EQ(out.indices, (std::vector<uint64_t>{0, 1, 2, 3}));
    const uint32_t u = ResultBatch::kUncounted;
    if (eb == BlockEncoding::kCoo)
      EXPECT_EQ(out.estimated_counts, (std::vector<uint32_t>{1, 2, 4, 2}));
    else
      EXPECT_EQ(out.estimated_counts, (std::vector<uint32_t>{1, u, u, u}));
  }
}

// A consumed batch's view comes back for the next decode with its lists'
// memory: a view freed per frame made the allocator return pages to the
// system and fault them in again every call.
TEST(ShardAggregatorCounts, ConsumedViewsAreKeptForReuse) {
  const BlockLayout layout(4096, 256);
  std::vector<float> t(4096, 0.0f);
  for (size_t i = 0; i < t.size(); i += 37) t[i] = 1;
  ShardAggregator agg(1, DType::kFloat32);
  agg.reset(layout);
  BatchView view = agg.take_spare_view();
  EXPECT_EQ(view.positions.capacity(), 0u);
  Frame f = make_encoded(t, layout, BlockEncoding::kCoo, view);
  const size_t capacity = view.positions.capacity();
  ASSERT_GT(capacity, 0u);
  ASSERT_TRUE(agg.push(0, std::move(f), std::move(view)).is_ok());
  ResultBatch out;
  int waiting = -1;
  ASSERT_EQ(agg.advance(out, ResultLimit{100}, &waiting), ShardAggregator::Progress::kDone);
  EXPECT_GE(agg.take_spare_view().positions.capacity(), capacity);
}

struct Reduced {
  std::vector<float> out;
  BatchShape shape;   // of every flush: a range's range_shapes, or its blocks with their estimated counts
  size_t ranges = 0;  // batches reduced as a range
  std::vector<BatchShape> range_shapes;  // every range's, in order
};

// Every worker's stream reduced into `out` as the direct route does (sums
// written in place, the gaps zeroed by the caller), feeding each worker's
// batches one at a time so the aggregator waits in between.
// With `all_first`, every batch is pushed before anything is reduced
// instead (workers that do not hold a block then join its range).
Reduced reduce_direct(std::vector<Stream> streams, const BlockLayout& layout, bool all_first = false) {
  ShardAggregator agg(static_cast<int>(streams.size()), DType::kFloat32);
  agg.reset(layout);
  agg.set_range_shapes(true);
  Reduced r;
  r.out.assign(layout.count(), -1.0f);  // poison: every element must be written
  auto* sums = reinterpret_cast<uint8_t*>(r.out.data());
  std::vector<size_t> fed(streams.size(), 0);
  for (size_t w = 0; w < streams.size() && all_first; ++w)
    for (; fed[w] < streams[w].frames.size(); ++fed[w])
      EXPECT_TRUE(agg.push(static_cast<int>(w), std::move(streams[w].frames[fed[w]]), std::move(streams[w].views[fed[w]]))
                      .is_ok());
  uint64_t written_to = 0;  // blocks below are final
  auto element_of = [&](uint64_t block) { return block < layout.num_blocks() ? layout.block_begin(block) : layout.count(); };
  auto zero_gap = [&](uint64_t to) {
    if (to > written_to)
      std::fill(r.out.begin() + static_cast<std::ptrdiff_t>(element_of(written_to)),
                r.out.begin() + static_cast<std::ptrdiff_t>(element_of(to)), 0.0f);
  };
  while (true) {
    ResultBatch out;
    int waiting = -1;
    const auto progress = agg.advance(out, ResultLimit{5}, &waiting, sums);
    if (progress == ShardAggregator::Progress::kNeedInput) {
      const auto w = static_cast<size_t>(waiting);
      EXPECT_LT(fed[w], streams[w].frames.size());
      if (fed[w] >= streams[w].frames.size()) break;
      EXPECT_TRUE(agg.push(waiting, std::move(streams[w].frames[fed[w]]), std::move(streams[w].views[fed[w]])).is_ok());
      ++fed[w];
      continue;
    }
    if (out.is_range()) {
      EXPECT_TRUE(out.indices.empty());
      ++r.ranges;
      zero_gap(out.written_from);
      written_to = out.written_to;
      for (const BatchShape& shape : out.range_shapes) {
        r.shape.blocks += shape.blocks;
        r.shape.elements += shape.elements;
        r.shape.nonzeros += shape.nonzeros;
        r.shape.bitmap_bytes += shape.bitmap_bytes;
        r.range_shapes.push_back(shape);
      }
    } else {
      for (size_t i = 0; i < out.indices.size(); ++i) {
        const uint64_t b = out.indices[i];
        zero_gap(b);
        written_to = b + 1;
        r.shape.add_block(layout.block_begin(b), layout.block_length(b), out.estimated_counts[i]);
      }
    }
    if (progress == ShardAggregator::Progress::kDone) break;
  }
  zero_gap(layout.num_blocks());
  return r;
}

// The range reduction (every holder sent offsets) gives the very bits the
// block-by-block one gives (bitmap batches force that one), and a result
// shape with the same blocks, elements and bitmap bytes, at block sizes 1 to
// 300, with batch ends that differ between workers and values whose sum
// depends on the order they are added in. Its non-zero estimate caps the
// holders' counts per range, not per block: no lower than the per-block
// caps, no higher than the holders' counts, and equal where no block's
// counts reach its length.
TEST(ShardAggregatorRange, MatchesTheBlockByBlockReductionBitForBit) {
  std::mt19937 rng(17);
  for (size_t block : {size_t{1}, size_t{4}, size_t{37}, size_t{300}}) {
    for (double fill : {0.001, 0.02, 0.3}) {
      const BlockLayout layout(40000 + block / 2, block);
      std::vector<std::vector<float>> tensors(4, std::vector<float>(layout.count(), 0.0f));
      std::bernoulli_distribution hit(fill);
      std::uniform_real_distribution<float> value(-1e3f, 1e3f);
      for (auto& t : tensors)
        for (float& v : t)
          if (hit(rng)) v = value(rng) * (rng() % 2 ? 1e-4f : 1.0f);
      auto streams = [&](BlockEncoding e) {
        std::vector<Stream> s;
        for (size_t w = 0; w < tensors.size(); ++w) s.push_back(make_stream(tensors[w], layout, e, 7 + 13 * w));
        return s;
      };
      const Reduced range = reduce_direct(streams(BlockEncoding::kCoo), layout);
      const Reduced blocks = reduce_direct(streams(BlockEncoding::kBitmap), layout);
      const Reduced joined = reduce_direct(streams(BlockEncoding::kCoo), layout, true);
      SCOPED_TRACE("block " + std::to_string(block) + " fill " + std::to_string(fill));
      EXPECT_GT(range.ranges, 0u);
      EXPECT_EQ(blocks.ranges, 0u);
      ASSERT_EQ(0, std::memcmp(range.out.data(), blocks.out.data(), range.out.size() * 4));
      // With every batch in hand the ranges are longer, and the route
      // choice's shapes the same, range for range.
      ASSERT_EQ(0, std::memcmp(joined.out.data(), blocks.out.data(), joined.out.size() * 4));
      EXPECT_LE(joined.ranges, range.ranges);
      if (block == 1 && fill > 0.01) {
        EXPECT_LT(joined.ranges, range.ranges);
      }
      ASSERT_EQ(joined.range_shapes.size(), range.range_shapes.size());
      for (size_t i = 0; i < range.range_shapes.size(); ++i) {
        const BatchShape &a = range.range_shapes[i], &b = joined.range_shapes[i];
        ASSERT_EQ(std::make_tuple(a.blocks, a.elements, a.nonzeros, a.bitmap_bytes, a.span_begin, a.span_end),
                  std::make_tuple(b.blocks, b.elements, b.nonzeros, b.bitmap_bytes, b.span_begin, b.span_end))
            << "range " << i;
        // The span runs from a block's start past every element of the range's blocks.
        EXPECT_EQ(a.span_begin % block, 0u) << "range " << i;
        EXPECT_GE(a.span_end - a.span_begin, a.elements) << "range " << i;
        EXPECT_LE(a.span_end, layout.count()) << "range " << i;
      }
      EXPECT_EQ(range.shape.blocks, blocks.shape.blocks);
      EXPECT_EQ(range.shape.elements, blocks.shape.elements);
      EXPECT_EQ(range.shape.bitmap_bytes, blocks.shape.bitmap_bytes);
      uint64_t held = 0;
      for (const auto& t : tensors)
        held += static_cast<uint64_t>(std::count_if(t.begin(), t.end(), [](float v) { return v != 0.0f; }));
      EXPECT_GE(range.shape.nonzeros, blocks.shape.nonzeros);
      EXPECT_LE(range.shape.nonzeros, held);
      if (block == 1 || fill * static_cast<double>(block) * static_cast<double>(tensors.size()) < 0.1) {
        EXPECT_EQ(range.shape.nonzeros, blocks.shape.nonzeros);
      }
      // And the sums are the rank-order sums.
      for (size_t i = 0; i < layout.count(); i += 97) {
        float want = 0.0f;
        for (const auto& t : tensors) want += t[i];
        ASSERT_EQ(range.out[i], want) << "element " << i;
      }
    }
  }
}

}  // namespace
}  // namespace omnib
