// A non-owning view of a tensor that a collective reads or writes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace omnib {

enum class DType { kFloat32, kInt32 };
enum class DeviceKind { kCpu, kCuda };

inline size_t dtype_size(DType) { return 4; }
std::string_view dtype_name(DType t);
std::optional<DType> parse_dtype(std::string_view name);
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
