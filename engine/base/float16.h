// Conversions between fp32 and the two 16-bit float types, as raw bits.
//
// bfloat16 is the top half of an fp32 (sign, 8 exponent bits, 7 mantissa
// bits); IEEE binary16 ("half") has 5 exponent and 10 mantissa bits, with
// subnormals. Narrowing rounds to nearest, ties to even, like the hardware
// conversions (CUDA's __float2bfloat16_rn / __float2half_rn, F16C's
// vcvtps2ph with rounding mode 0): overflow gives infinity, a NaN stays a
// (quiet) NaN. Widening is exact.
//
// Plain integer and float arithmetic, no intrinsics, so every CPU algorithm
// and the reference get the same bits. The half conversions follow
// Maratyszcza's FP16 library (fp16_ieee_{to,from}_fp32_value), which lets
// the FPU do the rounding; they need IEEE float arithmetic in round to
// nearest (no -ffast-math, no flush to zero).
#pragma once

#include <bit>
#include <cstdint>

namespace omnib {

inline float bf16_to_float(uint16_t h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }

inline uint16_t float_to_bf16(float f) {
  const uint32_t w = std::bit_cast<uint32_t>(f);
  if ((w & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((w >> 16) | 0x0040u);  // quiet NaN
  // Adding 0x7fff plus the lowest kept bit rounds to nearest, ties to even;
  // a carry into the exponent is right (up to infinity).
  return static_cast<uint16_t>((w + 0x7fffu + ((w >> 16) & 1u)) >> 16);
}

inline float half_to_float(uint16_t h) {
  const uint32_t w = static_cast<uint32_t>(h) << 16;
  const uint32_t sign = w & 0x80000000u;
  const uint32_t two_w = w + w;
  // Normal and infinite/NaN inputs: move the exponent into place and rescale.
  constexpr uint32_t kExpOffset = 0xE0u << 23;
  const float normalized = std::bit_cast<float>((two_w >> 4) + kExpOffset) * 0x1.0p-112f;
  // Subnormal inputs: the mantissa as the low bits of 0.5's, minus 0.5.
  constexpr uint32_t kMagicMask = 126u << 23;
  const float denormalized = std::bit_cast<float>((two_w >> 17) | kMagicMask) - 0.5f;
  constexpr uint32_t kDenormalizedCutoff = 1u << 27;
  const uint32_t bits =
      sign | std::bit_cast<uint32_t>(two_w < kDenormalizedCutoff ? denormalized : normalized);
  return std::bit_cast<float>(bits);
}

inline uint16_t float_to_half(float f) {
  // Scaling up then down lets the FPU round the mantissa at the right bit
  // (and overflow to infinity); the bias addition below aligns it.
  float base = (std::bit_cast<float>(std::bit_cast<uint32_t>(f) & 0x7fffffffu) * 0x1.0p+112f) * 0x1.0p-110f;
  const uint32_t w = std::bit_cast<uint32_t>(f);
  const uint32_t shl1_w = w + w;
  const uint32_t sign = w & 0x80000000u;
  uint32_t bias = shl1_w & 0xFF000000u;
  if (bias < 0x71000000u) bias = 0x71000000u;
  base = std::bit_cast<float>((bias >> 1) + 0x07800000u) + base;
  const uint32_t bits = std::bit_cast<uint32_t>(base);
  const uint32_t exp_bits = (bits >> 13) & 0x00007C00u;
  const uint32_t mantissa_bits = bits & 0x00000FFFu;
  const uint32_t nonsign = exp_bits + mantissa_bits;
  return static_cast<uint16_t>((sign >> 16) | (shl1_w > 0xFF000000u ? 0x7E00u : nonsign));
}

}  // namespace omnib
