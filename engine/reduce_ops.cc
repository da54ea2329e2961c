#include "engine/reduce_ops.h"

#include <cstdint>

namespace omnib {
namespace {

template <typename T>
void add_typed(T* __restrict dst, const T* __restrict src, size_t n) {
  for (size_t i = 0; i < n; ++i) dst[i] += src[i];
}

}  // namespace

void add_into(DType dtype, void* dst, const void* src, size_t n) {
  switch (dtype) {
    case DType::kFloat32:
      add_typed(static_cast<float*>(dst), static_cast<const float*>(src), n);
      return;
    case DType::kInt32:
      // Wrap-around like NCCL's int32 sum; unsigned avoids signed overflow UB.
      add_typed(static_cast<uint32_t*>(dst), static_cast<const uint32_t*>(src), n);
      return;
  }
}

}  // namespace omnib
