// The .npy header parser (tools/workloads/npy_file.cc parse_npy_header): a
// header that passes has a shape whose product is its count, and the count's
// bytes lie inside the file; a refusal names the file.
//
// Input: the file's bytes.
#include <string>

#include "fuzz/fuzz_input.h"
#include "tools/workloads/npy_file.h"

using namespace omnib;

namespace {

void check(std::span<const uint8_t> bytes, uint64_t file_bytes, DType dtype) {
  static const std::string kName = "fuzzed.npy";
  auto r = parse_npy_header(bytes, file_bytes, dtype, kName);
  if (!r.is_ok()) {
    if (r.status().code() != Code::kUsage || r.status().message().rfind(kName + ": ", 0) != 0)
      fuzz::fail("a refusal that is not a usage error naming the file");
    return;
  }
  const NpyHeader& h = r.value();
  uint64_t product = 1;
  for (uint64_t d : h.shape)
    if (d == 0 || __builtin_mul_overflow(product, d, &product)) fuzz::fail("a zero or overflowing dimension passed");
  if (product != h.count || h.count == 0) fuzz::fail("count is not the product of the shape");
  if (h.shape.size() > kNpyMaxDims) fuzz::fail("too many dimensions passed");
  if (h.data_offset > bytes.size()) fuzz::fail("data starts past the header bytes given");
  if (h.count > (file_bytes - h.data_offset) / 4) fuzz::fail("the elements do not fit in the file");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  check(bytes, size, DType::kFloat32);
  check(bytes, size, DType::kInt32);
  // As the head of a much longer file: the shape's size checks alone.
  check(bytes, ~uint64_t{0}, DType::kFloat32);
  return 0;
}
