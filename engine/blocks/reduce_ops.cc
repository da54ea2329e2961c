#include "engine/blocks/reduce_ops.h"

#include <cstdint>

#include "engine/base/float16.h"

namespace omnib {
namespace {

template <typename T>
void add_typed(T* __restrict dst, const T* __restrict src, size_t n) {
  for (size_t i = 0; i < n; ++i) dst[i] += src[i];
}

template <typename T>
void scatter_add_typed(T* __restrict dst, const uint32_t* __restrict pos, const T* __restrict src, size_t n) {
  for (size_t k = 0; k < n; ++k) dst[pos[k]] += src[k];
}

// The conversions of one 16-bit type, as a type the loops below inline.
struct Bf16 {
  static float widen(uint16_t h) { return bf16_to_float(h); }
  static uint16_t narrow(float f) { return float_to_bf16(f); }
};
struct Half {
  static float widen(uint16_t h) { return half_to_float(h); }
  static uint16_t narrow(float f) { return float_to_half(f); }
};

template <typename F>
void add_16bit(uint16_t* __restrict dst, const uint16_t* __restrict src, size_t n) {
  for (size_t i = 0; i < n; ++i) dst[i] = F::narrow(F::widen(dst[i]) + F::widen(src[i]));
}

template <typename F>
void widen_16bit(float* __restrict acc, const uint16_t* __restrict src, size_t n) {
  for (size_t i = 0; i < n; ++i) acc[i] = F::widen(src[i]);
}

template <typename F>
void add_widened_16bit(float* __restrict acc, const uint16_t* __restrict src, size_t n) {
  for (size_t i = 0; i < n; ++i) acc[i] += F::widen(src[i]);
}

template <typename F>
void narrow_16bit(uint16_t* __restrict dst, const float* __restrict acc, size_t n) {
  for (size_t i = 0; i < n; ++i) dst[i] = F::narrow(acc[i]);
}

// Calls body.template operator()<F>() with the conversions of a 16-bit dtype.
template <typename Body>
void with_16bit(DType dtype, Body&& body) {
  if (dtype == DType::kBFloat16)
    body.template operator()<Bf16>();
  else if (dtype == DType::kFloat16)
    body.template operator()<Half>();
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
    case DType::kBFloat16:
    case DType::kFloat16:
      with_16bit(dtype, [&]<typename F>() {
        add_16bit<F>(static_cast<uint16_t*>(dst), static_cast<const uint16_t*>(src), n);
      });
      return;
  }
}

void scatter_add(DType dtype, void* dst, const uint32_t* pos, const void* src, size_t n) {
  switch (dtype) {
    case DType::kFloat32:
      scatter_add_typed(static_cast<float*>(dst), pos, static_cast<const float*>(src), n);
      return;
    case DType::kInt32:
      scatter_add_typed(static_cast<uint32_t*>(dst), pos, static_cast<const uint32_t*>(src), n);
      return;
    case DType::kBFloat16:
    case DType::kFloat16:
      with_16bit(dtype, [&]<typename F>() {
        auto* d = static_cast<uint16_t*>(dst);
        const auto* s = static_cast<const uint16_t*>(src);
        for (size_t k = 0; k < n; ++k) d[pos[k]] = F::narrow(F::widen(d[pos[k]]) + F::widen(s[k]));
      });
      return;
  }
}

void scatter_add_widened(DType dtype, float* acc, const uint32_t* pos, const void* src, size_t n) {
  with_16bit(dtype, [&]<typename F>() {
    const auto* s = static_cast<const uint16_t*>(src);
    for (size_t k = 0; k < n; ++k) acc[pos[k]] += F::widen(s[k]);
  });
}

void widen_into(DType dtype, float* acc, const void* src, size_t n) {
  with_16bit(dtype, [&]<typename F>() { widen_16bit<F>(acc, static_cast<const uint16_t*>(src), n); });
}

void add_widened(DType dtype, float* acc, const void* src, size_t n) {
  with_16bit(dtype, [&]<typename F>() { add_widened_16bit<F>(acc, static_cast<const uint16_t*>(src), n); });
}

void narrow_from(DType dtype, void* dst, const float* acc, size_t n) {
  with_16bit(dtype, [&]<typename F>() { narrow_16bit<F>(static_cast<uint16_t*>(dst), acc, n); });
}

}  // namespace omnib
