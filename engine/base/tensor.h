// A non-owning view of a tensor that a collective reads or writes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace omnib {

// Element types. kBFloat16 (bfloat16: 8 exponent, 7 mantissa bits) and
// kFloat16 (IEEE binary16, "half") are summed in fp32 and rounded to
// nearest even (engine/base/float16.h, engine/blocks/reduce_ops.h).
enum class DType { kFloat32, kInt32, kBFloat16, kFloat16 };
enum class DeviceKind { kCpu, kCuda };

inline size_t dtype_size(DType t) { return t == DType::kBFloat16 || t == DType::kFloat16 ? 2 : 4; }
// True for the 16-bit floating types.
inline bool is_16bit_float(DType t) { return t == DType::kBFloat16 || t == DType::kFloat16; }
// "float", "int32", "bf16", "half": how -d and the JSON spell a type.
std::string_view dtype_name(DType t);
// Accepts the names above and float32/fp32, int, bfloat16, float16/fp16.
std::optional<DType> parse_dtype(std::string_view name);
// The names -d accepts, for messages: "float, int32, bf16 or half".
std::string_view dtype_choices();
std::string_view device_name(DeviceKind d);

struct TensorView {
  void* data = nullptr;
  size_t count = 0;  // elements
  DType dtype = DType::kFloat32;
  DeviceKind device = DeviceKind::kCpu;

  size_t bytes() const { return count * dtype_size(dtype); }
  template <typename T>
  T* as() const { return static_cast<T*>(data); }
};

}  // namespace omnib
