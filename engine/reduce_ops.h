// Element-wise sums used by every CPU algorithm. All sums of one block happen
// in a fixed order chosen by the caller, so results are deterministic.
#pragma once

#include <cstddef>

#include "engine/tensor.h"

namespace omnib {

// dst[i] += src[i] for n elements of `dtype`.
void add_into(DType dtype, void* dst, const void* src, size_t n);

}  // namespace omnib
