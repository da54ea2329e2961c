// Reading NumPy .npy files (format versions 1.0-3.0): the header and the raw
// element data of little-endian 4-byte arrays. Errors are usage errors that
// name the file and say how to write one that works.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/status.h"
#include "engine/tensor.h"

namespace omnib {

struct NpyHeader {
  std::string descr;  // e.g. "<f4"
  bool fortran_order = false;
  std::vector<uint64_t> shape;
  uint64_t count = 1;       // product of shape (1 for a 0-d array)
  uint64_t data_offset = 0; // where the elements start in the file
};

// Parses and checks the header of `path`: the magic, the shape, that the
// element type is `dtype` ("<f4" for float, "<i4" for int32), C order, and
// that the file holds all the elements the shape promises.
Result<NpyHeader> read_npy_header(const std::string& path, DType dtype);

// Streams the elements of `path` to `consume(first_index, data, n)` in chunks;
// `data` holds n 4-byte elements and is valid only during the call.
Status read_npy_elements(const std::string& path, const NpyHeader& header,
                         const std::function<void(uint64_t, const uint32_t*, size_t)>& consume);

}  // namespace omnib
