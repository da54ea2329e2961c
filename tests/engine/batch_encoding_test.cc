// The batch encodings: what pack_sparse builds decodes back to the blocks it
// was given, the sizes the choice is made from are the sizes on the wire,
// and malformed sparse batches are refused.
#include "engine/omni/batch_encoding.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "engine/blocks/block_scan.h"
#include "engine/omni/block_batch.h"
#include "tests/support/batch_payload.h"

namespace omnib {
namespace {

// A tensor of `count` elements of `elem` bytes whose blocks hold about
// `fill` non-zeros each (some blocks none), as raw bytes.
std::vector<uint8_t> tensor_bytes(size_t count, size_t elem, double fill, uint32_t seed) {
  std::mt19937 rng(seed);
  std::bernoulli_distribution hit(fill);
  std::vector<uint8_t> t(count * elem, 0);
  for (size_t i = 0; i < count; ++i)
    if (hit(rng)) {
      const uint32_t v = 0x3f800000u + static_cast<uint32_t>(i);  // non-zero in either width
      std::memcpy(t.data() + i * elem, &v, elem);
    }
  return t;
}

struct Built {
  std::vector<uint8_t> payload;
  BatchShape shape;
  BlockEncoding encoding;
};

Built build(BlockEncoding forced, const std::vector<uint64_t>& blocks, const std::vector<uint8_t>& t,
            const BlockLayout& layout, size_t elem, uint64_t next) {
  BuiltBatch built = build_batch(forced, blocks, t.data(), layout, elem, next);
  return Built{std::move(built.payload), built.shape, forced};
}

class EncodingRoundTrip : public ::testing::TestWithParam<std::tuple<BlockEncoding, size_t /*elem*/, size_t /*block*/>> {};

TEST_P(EncodingRoundTrip, DecodesToTheBlocksItWasGivenAndSizesMatch) {
  const auto [encoding, elem, block] = GetParam();
  const size_t count = 1000;  // a short last block for most block sizes
  const BlockLayout layout(count, block);
  const ShardMap one(layout.num_blocks(), 1, ShardLayout::kContiguous, 1);
  for (double fill : {0.02, 0.3, 1.0}) {
    const auto t = tensor_bytes(count, elem, fill, 5);
    std::vector<uint64_t> blocks = nonzero_blocks(t.data(), elem, layout);
    if (blocks.size() > 3) blocks.erase(blocks.begin() + 1);  // not all adjacent
    const Built b = build(encoding, blocks, t, layout, elem, kEndOfStream);
    EXPECT_EQ(b.payload.size(), sizeof(BatchHeader) + encoded_bytes(encoding, b.shape, elem)) << fill;
    BatchView view;
    const Status st = decode_batch(b.payload, layout, elem, one, 0, view);
    ASSERT_TRUE(st.is_ok()) << st.message();
    ASSERT_EQ(view.count, blocks.size());
    for (uint32_t i = 0; i < view.count; ++i) {
      ASSERT_EQ(view.indices[i], blocks[i]);
      const size_t len = layout.block_length(blocks[i]);
      std::vector<uint8_t> got(len * elem, 0xAB);
      view.write_block(i, len, elem, got.data());
      const uint8_t* want = t.data() + layout.block_begin(blocks[i]) * elem;
      ASSERT_EQ(0, std::memcmp(got.data(), want, len * elem)) << "block " << blocks[i] << " fill " << fill;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Encodings, EncodingRoundTrip,
    ::testing::Combine(::testing::Values(BlockEncoding::kBlocks, BlockEncoding::kBitmap, BlockEncoding::kCoo,
                                         BlockEncoding::kCoo16),
                       ::testing::Values(size_t{2}, size_t{4}), ::testing::Values(size_t{1}, size_t{7}, size_t{256})));

TEST(EncodingChoice, AutoPicksTheSmallestThatSavesEnough) {
  BatchShape dense;
  dense.add_block(0, 256, 256);
  EXPECT_EQ(choose_encoding(EncodingPolicy::kAuto, dense, 4), BlockEncoding::kBlocks);
  // Ten blocks of a few non-zeros within a page: 16-bit offsets.
  BatchShape scattered;
  for (uint64_t i = 0; i < 10; ++i) scattered.add_block(i * 256, 256, 2);
  EXPECT_EQ(scattered.pages(), 1u);
  EXPECT_EQ(choose_encoding(EncodingPolicy::kAuto, scattered, 4), BlockEncoding::kCoo16);
  EXPECT_EQ(choose_encoding(EncodingPolicy::kCoo, scattered, 4), BlockEncoding::kCoo16);
  // The same blocks a page or more apart: a count per page costs more than
  // 16-bit offsets save, and the offsets stay 32 bits.
  BatchShape far_apart;
  for (uint64_t i = 0; i < 10; ++i) far_apart.add_block(i * 3 * kOffsetPageElements, 256, 2);
  EXPECT_EQ(far_apart.pages(), 28u);
  EXPECT_EQ(choose_encoding(EncodingPolicy::kAuto, far_apart, 4), BlockEncoding::kCoo);
  EXPECT_EQ(choose_encoding(EncodingPolicy::kCoo, far_apart, 4), BlockEncoding::kCoo);
  BatchShape half_full;
  for (uint64_t i = 0; i < 10; ++i) half_full.add_block(i * 256, 256, 100);
  EXPECT_EQ(choose_encoding(EncodingPolicy::kAuto, half_full, 4), BlockEncoding::kBitmap);
  for (const BatchShape& s : {dense, scattered, far_apart, half_full}) {
    const BlockEncoding e = choose_encoding(EncodingPolicy::kAuto, s, 4);
    for (BlockEncoding other :
         {BlockEncoding::kBlocks, BlockEncoding::kBitmap, BlockEncoding::kCoo, BlockEncoding::kCoo16})
      EXPECT_LE(encoded_bytes(e, s, 4), encoded_bytes(other, s, 4));
  }
  // Offsets past 32 bits of the first element cannot be listed.
  BatchShape beyond_offsets;
  beyond_offsets.add_block(0, 256, 2);
  beyond_offsets.add_block(uint64_t{1} << 32, 256, 2);
  EXPECT_EQ(choose_encoding(EncodingPolicy::kAuto, beyond_offsets, 4), BlockEncoding::kBitmap);
  // Nearly full blocks: a bitmap saving less than a sixteenth stays blocks,
  // one saving more is taken.
  BatchShape few_zeros, some_zeros;
  for (uint64_t i = 0; i < 10; ++i) few_zeros.add_block(i * 256, 256, 240), some_zeros.add_block(i * 256, 256, 230);
  EXPECT_LT(encoded_bytes(BlockEncoding::kBitmap, few_zeros, 4), encoded_bytes(BlockEncoding::kBlocks, few_zeros, 4));
  EXPECT_EQ(choose_encoding(EncodingPolicy::kAuto, few_zeros, 4), BlockEncoding::kBlocks);
  EXPECT_EQ(choose_encoding(EncodingPolicy::kAuto, some_zeros, 4), BlockEncoding::kBitmap);
  // A block whose sum cancelled cannot be carried by offsets.
  BatchShape cancelled = scattered;
  cancelled.add_block(10 * 256, 256, 0);
  EXPECT_EQ(choose_encoding(EncodingPolicy::kAuto, cancelled, 4), BlockEncoding::kBitmap);
  EXPECT_EQ(choose_encoding(EncodingPolicy::kCoo, cancelled, 4), BlockEncoding::kBitmap);
  EXPECT_EQ(choose_encoding(EncodingPolicy::kCoo, BatchShape{}, 4), BlockEncoding::kBlocks);  // an empty batch
  EXPECT_EQ(choose_encoding(EncodingPolicy::kBlocks, scattered, 4), BlockEncoding::kBlocks);
}

// The room a sparse batch takes follows its non-zeros: a batch of many
// blocks with a few non-zeros each packs into a buffer the size of what it
// sends (plus one block), not the size of its blocks' values.
TEST(EncodingPack, RoomFollowsTheNonZeros) {
  const size_t elem = 4, block = 256, blocks = 2000;
  const BlockLayout layout(block * blocks, block);
  std::vector<uint8_t> t(block * blocks * elem, 0);
  std::vector<uint64_t> all(blocks);
  for (size_t b = 0; b < blocks; ++b) {
    all[b] = b;
    t[(b * block + b % block) * elem] = 1;  // one non-zero per block
  }
  const iovec values{t.data(), t.size()};
  for (BlockEncoding e : {BlockEncoding::kBitmap, BlockEncoding::kCoo, BlockEncoding::kCoo16}) {
    UninitBytes packed;
    const Status st = pack_sparse(e, all, layout, elem, blocks, std::span<const iovec>(&values, 1), packed);
    ASSERT_TRUE(st.is_ok()) << st.message();
    BatchShape shape;
    for (size_t b = 0; b < blocks; ++b) shape.add_block(b * block, block, 1);
    EXPECT_EQ(sizeof(BatchHeader) + blocks * 8 * (e == BlockEncoding::kBitmap) + packed.size(),
              sizeof(BatchHeader) + encoded_bytes(e, shape, elem));
    // 16-bit offsets are packed 32 bits wide, after the page counts, and narrowed in place.
    const uint64_t packed_room = e == BlockEncoding::kCoo16
                                     ? encoded_bytes(BlockEncoding::kCoo, shape, elem) + shape.pages() * 4
                                     : encoded_bytes(e, shape, elem);
    EXPECT_LE(packed.capacity(), packed_room + block * (4 + elem) + 64)
        << block_encoding_name(e) << ": room for every element would be " << t.size() << " bytes";
  }
}

// Packing from the elements the scan took gives the very bytes packing from
// the tensor gives: both widths, tiny to long blocks, a short last block,
// both sparse encodings, batches that skip blocks.
TEST(EncodingPack, TakenElementsPackToTheBytesOfTheTensor) {
  for (size_t elem : {size_t{2}, size_t{4}}) {
    for (size_t block : {size_t{7}, size_t{16}, size_t{256}, size_t{1000}}) {
      for (double fill : {0.002, 0.05, 0.2}) {
        const size_t count = 6000 + block / 2;
        const auto t = tensor_bytes(count, elem, fill, 11);
        const BlockLayout layout(count, block);
        std::vector<uint64_t> found;
        std::vector<uint32_t> counts;
        FoundElements taken;
        find_count_and_take_nonzero_blocks(t.data(), elem, layout, {0, layout.num_blocks()}, found, counts, taken);
        // Batches of the taken blocks only, three found blocks apart at most.
        std::vector<uint64_t> blocks;
        std::vector<uint32_t> batch_counts;
        std::vector<uint32_t> positions;
        UninitBytes values;
        for (size_t k = 0; k < found.size(); k += 1 + k % 3) {
          if (taken.first[k] == FoundElements::kNotTaken) continue;
          blocks.push_back(found[k]);
          batch_counts.push_back(counts[k]);
          const uint64_t at = taken.first[k];
          positions.insert(positions.end(), taken.positions.begin() + static_cast<std::ptrdiff_t>(at),
                           taken.positions.begin() + static_cast<std::ptrdiff_t>(at + counts[k]));
          values.insert(values.end(), taken.values.begin() + static_cast<std::ptrdiff_t>(at * elem),
                        taken.values.begin() + static_cast<std::ptrdiff_t>((at + counts[k]) * elem));
        }
        if (blocks.empty()) continue;
        for (BlockEncoding e : {BlockEncoding::kBitmap, BlockEncoding::kCoo, BlockEncoding::kCoo16}) {
          const Built want = build(e, blocks, t, layout, elem, kEndOfStream);
          UninitBytes got;
          ASSERT_TRUE(
              pack_sparse_taken(e, blocks, batch_counts, layout, elem, positions.data(), values.data(), got).is_ok());
          const size_t head = sizeof(BatchHeader) + (e == BlockEncoding::kBitmap ? blocks.size() * 8 : 0);
          ASSERT_EQ(head + got.size(), want.payload.size()) << elem << " " << block << " " << fill;
          ASSERT_EQ(0, std::memcmp(got.data(), want.payload.data() + head, got.size()))
              << block_encoding_name(e) << " elem " << elem << " block " << block << " fill " << fill;
        }
      }
    }
  }
}

// A batch whose blocks the scan took in part (the others too dense to take)
// packs to the bytes packing from the tensor gives: taken blocks copied, the
// rest read from their values, given in pieces that split blocks.
TEST(EncodingPack, PartlyTakenBlocksPackToTheBytesOfTheTensor) {
  for (size_t elem : {size_t{2}, size_t{4}}) {
    for (size_t block : {size_t{7}, size_t{16}, size_t{256}}) {
      const size_t count = 6000 + block / 2;
      const auto t = tensor_bytes(count, elem, 0.2, 5);
      const BlockLayout layout(count, block);
      std::vector<uint64_t> found;
      std::vector<uint32_t> counts;
      FoundElements taken;
      find_count_and_take_nonzero_blocks(t.data(), elem, layout, {0, layout.num_blocks()}, found, counts, taken);
      size_t mixed = 0;
      for (size_t from = 0; from < found.size(); from += 9) {
        const size_t n = std::min<size_t>(9, found.size() - from);
        const std::vector<uint64_t> blocks(found.begin() + static_cast<std::ptrdiff_t>(from),
                                           found.begin() + static_cast<std::ptrdiff_t>(from + n));
        uint64_t nonzeros = 0;
        size_t not_taken = 0;
        for (size_t i = from; i < from + n; ++i) {
          nonzeros += counts[i];
          not_taken += taken.first[i] == FoundElements::kNotTaken;
        }
        mixed += not_taken > 0 && not_taken < n;
        // Each block's values, the first block's in two pieces.
        std::vector<iovec> pieces;
        for (uint64_t b : blocks) {
          auto* at = const_cast<uint8_t*>(t.data()) + layout.block_begin(b) * elem;
          const size_t bytes = layout.block_length(b) * elem;
          if (pieces.empty() && bytes > elem) {
            pieces.push_back({at, elem});
            pieces.push_back({at + elem, bytes - elem});
          } else {
            pieces.push_back({at, bytes});
          }
        }
        const TakenBlocks held{std::span<const uint64_t>(taken.first.data() + from, n),
                               std::span<const uint32_t>(counts.data() + from, n), taken.positions.data(),
                               taken.values.data()};
        for (BlockEncoding e : {BlockEncoding::kBitmap, BlockEncoding::kCoo, BlockEncoding::kCoo16}) {
          const Built want = build(e, blocks, t, layout, elem, kEndOfStream);
          UninitBytes got;
          ASSERT_TRUE(pack_sparse_partly_taken(e, blocks, layout, elem, nonzeros, held, pieces, got).is_ok());
          const size_t head = sizeof(BatchHeader) + (e == BlockEncoding::kBitmap ? blocks.size() * 8 : 0);
          ASSERT_EQ(head + got.size(), want.payload.size()) << elem << " " << block;
          ASSERT_EQ(0, std::memcmp(got.data(), want.payload.data() + head, got.size()))
              << block_encoding_name(e) << " elem " << elem << " block " << block << " batch at " << from;
        }
      }
      EXPECT_GT(mixed, 0u) << "block " << block << ": no batch mixes taken and untaken blocks";
    }
  }
}

// A count that disagrees with the values is refused, never written past.
TEST(EncodingPack, ACountThatDisagreesWithTheValuesIsAnInternalError) {
  const size_t elem = 4;
  const BlockLayout layout(64, 16);
  std::vector<uint8_t> t(64 * elem, 0);
  for (size_t i = 0; i < 64; i += 2) t[i * elem] = 1;  // 32 non-zeros, 8 per block
  const std::vector<uint64_t> blocks{0, 1, 2, 3};
  const iovec values{t.data(), t.size()};
  for (BlockEncoding e : {BlockEncoding::kBitmap, BlockEncoding::kCoo, BlockEncoding::kCoo16}) {
    UninitBytes packed;
    EXPECT_TRUE(pack_sparse(e, blocks, layout, elem, 32, std::span<const iovec>(&values, 1), packed).is_ok());
    for (uint64_t wrong : {0, 1, 31, 33}) {
      const Status st = pack_sparse(e, blocks, layout, elem, wrong, std::span<const iovec>(&values, 1), packed);
      EXPECT_EQ(st.code(), Code::kInternal) << block_encoding_name(e) << " counted " << wrong;
    }
  }
}

TEST(EncodingDecode, RefusesMalformedSparseBatches) {
  const size_t elem = 4;
  const BlockLayout layout(64, 16);
  const ShardMap one(4, 1, ShardLayout::kContiguous, 1);
  const ShardMap halves(4, 2, ShardLayout::kContiguous, 1);
  std::vector<uint8_t> t(64 * elem, 0);
  for (size_t i : {1, 5, 20, 40, 41, 63}) t[i * elem] = 1;
  const std::vector<uint64_t> blocks{0, 1, 2, 3};
  BatchView view;
  auto ok = [&](const std::vector<uint8_t>& p, const ShardMap& m = ShardMap(4, 1, ShardLayout::kContiguous, 1)) {
    return decode_batch(p, layout, elem, m, 0, view).is_ok();
  };
  const auto bitmap = build(BlockEncoding::kBitmap, blocks, t, layout, elem, kEndOfStream).payload;
  const auto coo = build(BlockEncoding::kCoo, blocks, t, layout, elem, kEndOfStream).payload;
  ASSERT_TRUE(ok(bitmap));
  ASSERT_TRUE(ok(coo));
  // Unknown encoding.
  auto unknown = bitmap;
  unknown[4] = 7;
  EXPECT_FALSE(ok(unknown));
  // Bitmap: a value short, a value extra, padding set.
  auto short_bitmap = bitmap;
  short_bitmap.resize(short_bitmap.size() - elem);
  EXPECT_FALSE(ok(short_bitmap));
  auto long_bitmap = bitmap;
  long_bitmap.insert(long_bitmap.end(), elem, 0);
  EXPECT_FALSE(ok(long_bitmap));
  auto extra_bit = bitmap;
  extra_bit[16 + 4 * 8 + 7] |= 0x40;  // element 14 of block 3: a value more than the payload holds
  EXPECT_FALSE(ok(extra_bit));
  // Three blocks: 6 map bytes and 2 of padding, which must be zero.
  auto padded = build(BlockEncoding::kBitmap, {0, 1, 2}, t, layout, elem, 3).payload;
  ASSERT_TRUE(ok(padded));
  padded[16 + 3 * 8 + 6] = 1;
  EXPECT_FALSE(ok(padded));
  // Offsets: count disagreeing with the blocks, out of order, reserved set,
  // a block of another shard, an empty offsets batch.
  auto wrong_count = coo;
  wrong_count[0] = 3;
  EXPECT_FALSE(ok(wrong_count));
  auto reversed = coo;
  std::swap(reversed[32], reversed[36]);
  EXPECT_FALSE(ok(reversed));
  auto reserved = coo;
  reserved[16 + 12] = 1;
  EXPECT_FALSE(ok(reserved));
  EXPECT_FALSE(decode_batch(coo, layout, elem, halves, 1, view).is_ok());
  // The shard's own blocks first, then another shard's (ownership is
  // looked up once per run of the shard's blocks: the next run is checked).
  EXPECT_FALSE(decode_batch(coo, layout, elem, halves, 0, view).is_ok());
  EXPECT_FALSE(decode_batch(coo, layout, elem, ShardMap(4, 2, ShardLayout::kStriped, 1), 0, view).is_ok());
  const auto empty = build(BlockEncoding::kCoo, {}, t, layout, elem, kEndOfStream).payload;
  EXPECT_FALSE(ok(empty));
  EXPECT_TRUE(ok(build(BlockEncoding::kBlocks, {}, t, layout, elem, kEndOfStream).payload));
}

// At block size 1 every element is a block, and the decoder takes a path of
// its own: it must refuse the same faults.
TEST(EncodingDecode, RefusesMalformedOffsetsAtBlockSizeOne) {
  const size_t elem = 4;
  const BlockLayout layout(64, 1);
  const ShardMap one(64, 1, ShardLayout::kContiguous, 1);
  std::vector<uint8_t> t(64 * elem, 0);
  const std::vector<uint64_t> blocks{3, 5, 20, 63};
  for (uint64_t b : blocks) t[b * elem] = 1;
  BatchView view;
  const auto coo = build(BlockEncoding::kCoo, blocks, t, layout, elem, kEndOfStream).payload;
  ASSERT_TRUE(decode_batch(coo, layout, elem, one, 0, view).is_ok());
  EXPECT_EQ(std::vector<uint64_t>(view.indices, view.indices + view.count), blocks);
  auto refused = [&](std::vector<uint8_t> p) { return !decode_batch(p, layout, elem, one, 0, view).is_ok(); };
  const size_t offsets_at = sizeof(BatchHeader) + 16;
  auto set_offset = [&](std::vector<uint8_t> p, size_t k, uint32_t v) {
    std::memcpy(p.data() + offsets_at + k * 4, &v, 4);
    return p;
  };
  EXPECT_TRUE(refused(set_offset(coo, 2, 2)));    // goes back (element 5)
  EXPECT_TRUE(refused(set_offset(coo, 1, 0)));    // repeats the first element
  EXPECT_TRUE(refused(set_offset(coo, 3, 61)));   // past the tensor (3 + 61)
  EXPECT_TRUE(refused(set_offset(coo, 0, 1)));    // does not start at the first block
  auto miscounted = coo;
  miscounted[0] = 3;                              // the header's block count
  EXPECT_TRUE(refused(miscounted));
}

// 16-bit offsets over several pages: a batch decodes to its blocks and
// values, and a page count, page ends or offsets that disagree are refused.
TEST(EncodingDecode, PagedOffsetsSpanPagesAndRefuseWhatDisagrees) {
  const size_t elem = 4;
  const BlockLayout layout(4 * kOffsetPageElements, 16);
  const ShardMap one(layout.num_blocks(), 1, ShardLayout::kContiguous, 1);
  std::vector<uint8_t> t(layout.count() * elem, 0);
  const std::vector<uint64_t> elements{5, 70000, 140000, 140001, 200000};  // pages 0, 1, 2, 2, 3
  std::vector<uint64_t> blocks;
  for (uint64_t e : elements) {
    const uint32_t v = 0x40000000u + static_cast<uint32_t>(e);
    std::memcpy(t.data() + e * elem, &v, elem);
    if (blocks.empty() || blocks.back() != e / 16) blocks.push_back(e / 16);
  }
  const Built built = build(BlockEncoding::kCoo16, blocks, t, layout, elem, kEndOfStream);
  const std::vector<uint8_t>& coo16 = built.payload;
  EXPECT_EQ(built.shape.pages(), 4u);
  EXPECT_EQ(coo16.size(), sizeof(BatchHeader) + encoded_bytes(BlockEncoding::kCoo16, built.shape, elem));
  BatchView view;
  ASSERT_TRUE(decode_batch(coo16, layout, elem, one, 0, view).is_ok());
  ASSERT_EQ(std::vector<uint64_t>(view.indices, view.indices + view.count), blocks);
  for (uint32_t i = 0; i < view.count; ++i) {
    std::vector<uint8_t> got(16 * elem);
    view.write_block(i, 16, elem, got.data());
    EXPECT_EQ(0, std::memcmp(got.data(), t.data() + blocks[i] * 16 * elem, got.size())) << "block " << blocks[i];
  }
  for (size_t k = 0; k < elements.size(); ++k) EXPECT_EQ(view.coo_base + view.coo_offsets[k], elements[k]);
  // After the batch header: first (8), m (4), pages (4), 4 page ends, 5
  // offsets of 16 bits, 6 bytes of padding, the values.
  const size_t ends_at = sizeof(BatchHeader) + 16, lows_at = ends_at + 16, pad_at = lows_at + 10;
  auto refused = [&](const std::vector<uint8_t>& p) { return !decode_batch(p, layout, elem, one, 0, view).is_ok(); };
  auto set32 = [](std::vector<uint8_t> p, size_t at, uint32_t v) {
    std::memcpy(p.data() + at, &v, 4);
    return p;
  };
  EXPECT_TRUE(refused(set32(coo16, sizeof(BatchHeader) + 12, 0)));  // no pages
  EXPECT_TRUE(refused(set32(coo16, sizeof(BatchHeader) + 12, 3)));  // a page short of the size
  EXPECT_TRUE(refused(set32(coo16, ends_at + 12, 4)));              // the last page's end is not m
  EXPECT_TRUE(refused(set32(coo16, ends_at + 4, 0)));               // ends go back
  // Element 70000 counted in page 2 instead of 1 lands on another block.
  EXPECT_TRUE(refused(set32(coo16, ends_at, 0)));
  auto swapped = coo16;  // the two offsets of page 2 reversed
  std::swap_ranges(swapped.begin() + lows_at + 4, swapped.begin() + lows_at + 6, swapped.begin() + lows_at + 6);
  EXPECT_TRUE(refused(swapped));
  auto padding = coo16;
  padding[pad_at + 1] = 1;
  EXPECT_TRUE(refused(padding));
  // A fifth page the blocks do not span, in the padding's room (same size).
  std::vector<uint8_t> extra_page(coo16.begin(), coo16.begin() + lows_at);
  extra_page = set32(extra_page, sizeof(BatchHeader) + 12, 5);
  const uint32_t m = 5;
  extra_page.insert(extra_page.end(), reinterpret_cast<const uint8_t*>(&m), reinterpret_cast<const uint8_t*>(&m) + 4);
  extra_page.insert(extra_page.end(), coo16.begin() + lows_at, coo16.begin() + pad_at);
  extra_page.insert(extra_page.end(), 2, 0);
  extra_page.insert(extra_page.end(), coo16.begin() + pad_at + 6, coo16.end());
  ASSERT_EQ(extra_page.size(), coo16.size());
  EXPECT_TRUE(refused(extra_page));
}

TEST(EncodingDecode, BitmapBitsPastAShortBlockAreRefused) {
  const size_t elem = 4;
  const BlockLayout layout(20, 16);  // block 1 holds 4 elements
  const ShardMap one(2, 1, ShardLayout::kContiguous, 1);
  std::vector<uint8_t> t(20 * elem, 0);
  t[17 * elem] = 1;
  auto p = build(BlockEncoding::kBitmap, {1}, t, layout, elem, kEndOfStream).payload;
  BatchView view;
  ASSERT_TRUE(decode_batch(p, layout, elem, one, 0, view).is_ok());
  p[16 + 8] |= 0x20;  // element 5 of a 4-element block
  EXPECT_FALSE(decode_batch(p, layout, elem, one, 0, view).is_ok());
}

}  // namespace
}  // namespace omnib
