// Element-wise sums used by every CPU algorithm. All sums of one block happen
// in a fixed order chosen by the caller, so results are deterministic.
//
// 16-bit float types (bf16, half) are summed in fp32: add_into rounds each
// pairwise sum back to 16 bits (what a ring or tree step does, like NCCL);
// an owner of many contributions (the omni aggregator) widens them into an
// fp32 accumulator and rounds once at the end (widen_into, add_widened,
// narrow_from).
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/base/tensor.h"

namespace omnib {

// dst[i] += src[i] for n elements of `dtype`.
void add_into(DType dtype, void* dst, const void* src, size_t n);

// dst[pos[k]] += src[k] for k < n: a sparse contribution (positions within
// the block, distinct).
void scatter_add(DType dtype, void* dst, const uint32_t* pos, const void* src, size_t n);
// 16-bit float types only: acc[pos[k]] += src[k] in fp32.
void scatter_add_widened(DType dtype, float* acc, const uint32_t* pos, const void* src, size_t n);

// 16-bit float types only (is_16bit_float): acc[i] = src[i] widened to fp32.
void widen_into(DType dtype, float* acc, const void* src, size_t n);
// 16-bit float types only: acc[i] += src[i] in fp32.
void add_widened(DType dtype, float* acc, const void* src, size_t n);
// 16-bit float types only: dst[i] = acc[i] rounded to nearest even.
void narrow_from(DType dtype, void* dst, const float* acc, size_t n);

}  // namespace omnib
