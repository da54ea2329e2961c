#include "tools/measure/call_check.h"

#include <cstring>

namespace omnib {

uint8_t poison_byte(DType dtype) { return dtype == DType::kFloat32 ? 0xFF : 0x7F; }

void poison(const TensorView& host) { std::memset(host.data, poison_byte(host.dtype), host.bytes()); }

uint64_t count_wrong(const TensorView& out, const TensorView& reference) {
  // Every element type we run is 4 bytes: compare words.
  const auto* a = static_cast<const uint32_t*>(out.data);
  const auto* b = static_cast<const uint32_t*>(reference.data);
  uint64_t wrong = 0;
  for (size_t i = 0; i < out.count; ++i) wrong += a[i] != b[i];
  return wrong;
}

}  // namespace omnib
