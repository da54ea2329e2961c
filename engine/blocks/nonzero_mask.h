// Which of 16 consecutive elements are non-zero, as the bits of a mask
// (bit j: element j), with the scan's rule: a 2- or 4-byte element is zero
// when every bit but its sign bit is clear, so -0.0 counts as zero.
//
// Packing a top-k block visits its non-zeros through this mask: one test per
// 16 elements, then a count-trailing-zeros per non-zero, instead of a branch
// per element that mispredicts as often as non-zeros and zeros alternate.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace omnib {

// The definition, one element at a time (any target).
template <typename W>
inline uint32_t nonzero_mask16_portable(const uint8_t* src) {
  constexpr W kMagnitude = static_cast<W>(static_cast<W>(~W{0}) >> 1);
  uint32_t mask = 0;
  for (unsigned j = 0; j < 16; ++j) {
    W w;
    std::memcpy(&w, src + j * sizeof(W), sizeof(W));
    mask |= static_cast<uint32_t>((w & kMagnitude) != 0) << j;
  }
  return mask;
}

// The same mask; on x86-64 from four (or two) vector compares.
template <typename W>
inline uint32_t nonzero_mask16(const uint8_t* src) {
  static_assert(sizeof(W) == 2 || sizeof(W) == 4);
#if defined(__SSE2__)
  const __m128i zero = _mm_setzero_si128();
  if constexpr (sizeof(W) == 4) {
    const __m128i magnitude = _mm_set1_epi32(0x7fffffff);
    uint32_t zeros = 0;
    for (unsigned q = 0; q < 4; ++q) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 16 * q));
      const __m128i is_zero = _mm_cmpeq_epi32(_mm_and_si128(v, magnitude), zero);
      zeros |= static_cast<uint32_t>(_mm_movemask_ps(_mm_castsi128_ps(is_zero))) << (4 * q);
    }
    return ~zeros & 0xffffu;
  } else {
    const __m128i magnitude = _mm_set1_epi16(0x7fff);
    const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src));
    const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 16));
    // Each 16-bit compare result (0 or -1) packs to one byte with its sign.
    const __m128i is_zero = _mm_packs_epi16(_mm_cmpeq_epi16(_mm_and_si128(lo, magnitude), zero),
                                            _mm_cmpeq_epi16(_mm_and_si128(hi, magnitude), zero));
    return ~static_cast<uint32_t>(_mm_movemask_epi8(is_zero)) & 0xffffu;
  }
#else
  return nonzero_mask16_portable<W>(src);
#endif
}

// Calls take(i) for each non-zero element i of the `len` elements of W at
// `src`, in increasing i.
template <typename W, typename Take>
inline void for_each_nonzero(const uint8_t* src, size_t len, Take&& take) {
  constexpr W kMagnitude = static_cast<W>(static_cast<W>(~W{0}) >> 1);
  size_t i = 0;
  for (; i + 16 <= len; i += 16) {
    for (uint32_t mask = nonzero_mask16<W>(src + i * sizeof(W)); mask != 0; mask &= mask - 1)
      take(i + static_cast<size_t>(std::countr_zero(mask)));
  }
  for (; i < len; ++i) {
    W w;
    std::memcpy(&w, src + i * sizeof(W), sizeof(W));
    if (w & kMagnitude) take(i);
  }
}

}  // namespace omnib
