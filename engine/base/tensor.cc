#include "engine/base/tensor.h"

namespace omnib {

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::kFloat32: return "float";
    case DType::kInt32: return "int32";
    case DType::kBFloat16: return "bf16";
    case DType::kFloat16: return "half";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view name) {
  if (name == "float" || name == "float32" || name == "fp32") return DType::kFloat32;
  if (name == "int32" || name == "int") return DType::kInt32;
  if (name == "bf16" || name == "bfloat16") return DType::kBFloat16;
  if (name == "half" || name == "float16" || name == "fp16") return DType::kFloat16;
  return std::nullopt;
}

std::string_view dtype_choices() { return "float, int32, bf16 or half"; }

std::string_view device_name(DeviceKind d) { return d == DeviceKind::kCpu ? "cpu" : "cuda"; }

}  // namespace omnib
