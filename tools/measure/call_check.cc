#include "tools/measure/call_check.h"

#include <cstring>

namespace omnib {
namespace {

template <typename W>
uint64_t count_differing(const void* out, const void* reference, size_t n) {
  const auto* a = static_cast<const W*>(out);
  const auto* b = static_cast<const W*>(reference);
  uint64_t wrong = 0;
  for (size_t i = 0; i < n; ++i) wrong += a[i] != b[i];
  return wrong;
}

}  // namespace

uint8_t poison_byte(DType dtype) { return dtype == DType::kInt32 ? 0x7F : 0xFF; }

void poison(const TensorView& host) { std::memset(host.data, poison_byte(host.dtype), host.bytes()); }

uint64_t count_wrong(const TensorView& out, const TensorView& reference) {
  if (dtype_size(out.dtype) == 2) return count_differing<uint16_t>(out.data, reference.data, out.count);
  return count_differing<uint32_t>(out.data, reference.data, out.count);
}

}  // namespace omnib
