// The fp32 <-> bf16 / half conversions (engine/base/float16.h) and the 16-bit
// sums of engine/blocks/reduce_ops.h: every 16-bit value widens exactly, narrowing
// rounds to nearest even (checked against the compiler's own _Float16 for
// half), and a pairwise 16-bit sum rounds each step while the widened sum
// rounds once.
#include "engine/base/float16.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>
#include <vector>

#include "engine/blocks/reduce_ops.h"
#include "tools/measure/call_check.h"

namespace omnib {
namespace {

bool is_nan_bits(uint16_t h, int exponent_bits) {
  const int mantissa_bits = 15 - exponent_bits;
  const uint16_t exponent = static_cast<uint16_t>(((1u << exponent_bits) - 1) << mantissa_bits);
  return (h & exponent) == exponent && (h & ((1u << mantissa_bits) - 1)) != 0;
}

TEST(Float16, EveryBf16WidensExactlyAndNarrowsBack) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const auto bits = static_cast<uint16_t>(h);
    const float f = bf16_to_float(bits);
    EXPECT_EQ(std::bit_cast<uint32_t>(f), h << 16);
    if (is_nan_bits(bits, 8)) {
      EXPECT_TRUE(is_nan_bits(float_to_bf16(f), 8)) << h;
      EXPECT_TRUE(float_to_bf16(f) & 0x0040) << "a NaN comes back quiet: " << h;
    } else {
      EXPECT_EQ(float_to_bf16(f), bits) << h;
    }
  }
}

TEST(Float16, Bf16RoundsToNearestEven) {
  auto narrow = [](uint32_t bits) { return float_to_bf16(std::bit_cast<float>(bits)); };
  EXPECT_EQ(narrow(0x3f808000u), 0x3f80);  // a tie: down to the even mantissa
  EXPECT_EQ(narrow(0x3f818000u), 0x3f82);  // a tie: up to the even mantissa
  EXPECT_EQ(narrow(0x3f808001u), 0x3f81);  // above the tie
  EXPECT_EQ(narrow(0x3f807fffu), 0x3f80);  // below the tie
  EXPECT_EQ(narrow(0x7f7fffffu), 0x7f80);  // the largest float rounds up to infinity
  EXPECT_EQ(narrow(0xbf808000u), 0xbf80);  // negative ties too
}

TEST(Float16, EveryHalfWidensLikeTheCompilersFloat16) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const auto bits = static_cast<uint16_t>(h);
    const float want = static_cast<float>(std::bit_cast<_Float16>(bits));
    const float got = half_to_float(bits);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << h;
      EXPECT_TRUE(is_nan_bits(float_to_half(got), 5)) << h;
    } else {
      EXPECT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(want)) << h;
      EXPECT_EQ(float_to_half(got), bits) << h;
    }
  }
}

TEST(Float16, HalfNarrowsLikeTheCompilersFloat16) {
  std::vector<uint32_t> cases = {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x477fe000u /* 65504 */,
                                 0x477ff000u /* tie above 65504: infinity */, 0x477fefffu, 0x33800000u /* 2^-24 */,
                                 0x33000000u /* 2^-25: a tie, to zero */, 0x33000001u, 0x387fc000u, 0x38800000u};
  std::mt19937 g(7);
  for (int i = 0; i < 2000000; ++i) {
    uint32_t bits = g();
    // Mostly the exponents half can hold (and a margin around them).
    if (i % 4 != 0) bits = (bits & 0x807fffffu) | ((100u + g() % 60u) << 23);
    cases.push_back(bits);
  }
  for (uint32_t bits : cases) {
    const float f = std::bit_cast<float>(bits);
    if (std::isnan(f)) continue;
    EXPECT_EQ(float_to_half(f), std::bit_cast<uint16_t>(static_cast<_Float16>(f))) << std::hex << bits;
  }
}

TEST(Float16, PairwiseSumsRoundEachStepWidenedSumsOnce) {
  for (auto [dtype, big] : {std::pair{DType::kBFloat16, 256.0f}, std::pair{DType::kFloat16, 2048.0f}}) {
    SCOPED_TRACE(std::string(dtype_name(dtype)));
    auto narrow = [&](float v) { return dtype == DType::kBFloat16 ? float_to_bf16(v) : float_to_half(v); };
    const uint16_t one = narrow(1.0f);
    uint16_t pairwise = narrow(big);
    add_into(dtype, &pairwise, &one, 1);
    add_into(dtype, &pairwise, &one, 1);
    EXPECT_EQ(pairwise, narrow(big));  // big + 1 is a tie that rounds back to big, twice

    float acc;
    const uint16_t start = narrow(big);
    widen_into(dtype, &acc, &start, 1);
    add_widened(dtype, &acc, &one, 1);
    add_widened(dtype, &acc, &one, 1);
    uint16_t once = 0;
    narrow_from(dtype, &once, &acc, 1);
    EXPECT_EQ(once, narrow(big + 2));
  }
}

// The harness poisons outputs with 0xFF bytes: in both 16-bit types that is
// 0xFFFF, a NaN (exponent all ones, mantissa non-zero), which no sum of the
// harness's finite values can be.
TEST(Float16, PoisonIsANaNInBothTypes) {
  for (DType t : {DType::kBFloat16, DType::kFloat16}) EXPECT_EQ(poison_byte(t), 0xFF);
  EXPECT_TRUE(std::isnan(bf16_to_float(0xFFFF)));
  EXPECT_TRUE(std::isnan(half_to_float(0xFFFF)));
}

}  // namespace
}  // namespace omnib
