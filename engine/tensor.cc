#include "engine/tensor.h"

namespace omnib {

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::kFloat32: return "float";
    case DType::kInt32: return "int32";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view name) {
  if (name == "float" || name == "float32" || name == "fp32") return DType::kFloat32;
  if (name == "int32" || name == "int") return DType::kInt32;
  return std::nullopt;
}

std::string_view device_name(DeviceKind d) { return d == DeviceKind::kCpu ? "cpu" : "cuda"; }

}  // namespace omnib
