// Reading NumPy .npy files (format versions 1.0-3.0): the header and the raw
// element data of little-endian 4-byte arrays. The files come from users and
// may be crafted: every number in the header is bounded and checked before
// anything is allocated or read. Errors are usage errors that name the file,
// say what is wrong and how to write one that works.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "engine/base/status.h"
#include "engine/base/tensor.h"

namespace omnib {

struct NpyHeader {
  std::string descr;  // e.g. "<f4"
  bool fortran_order = false;
  std::vector<uint64_t> shape;
  uint64_t count = 1;       // product of shape (1 for a 0-d array), at least 1
  uint64_t data_offset = 0; // where the elements start in the file
};

// Longest header dict accepted (numpy writes about a hundred bytes), and the
// most dimensions (numpy's own limit is 64).
constexpr uint64_t kNpyMaxHeaderBytes = uint64_t{1} << 20;
constexpr size_t kNpyMaxDims = 64;
// Bytes before the dict in format 2.0/3.0 (1.0 has two fewer): what a caller
// must hand to parse_npy_header, at most, beyond the dict itself.
constexpr uint64_t kNpyMaxPrefixBytes = 12;

// Parses and checks an .npy header held in `bytes`: the file's first bytes,
// through the end of the header dict at least (anything after it is ignored).
// `file_bytes` is the length of the whole file and `name` names it in the
// messages. Checks the magic, the version, the dict's syntax, that the
// element type is `dtype`'s ("<f4" for float, "<i4" for int32), C order, every
// dimension (digits only, no zero, no overflow of the element count, of the
// byte count or of the end offset), and that the file holds every element the
// shape promises. Pure: reads nothing but `bytes`, allocates at most the shape.
Result<NpyHeader> parse_npy_header(std::span<const uint8_t> bytes, uint64_t file_bytes, DType dtype,
                                   const std::string& name);

// Reads and checks the header of `path` (parse_npy_header). Refuses anything
// that is not a regular file (a FIFO, a device, a folder) before reading it,
// so it never blocks waiting for a writer.
Result<NpyHeader> read_npy_header(const std::string& path, DType dtype);

// Streams the elements of `path` to `consume(first_index, data, n)` in chunks;
// `data` holds n 4-byte elements and is valid only during the call. `header`
// must come from read_npy_header of the same path; a file that has changed
// since (shorter, or no longer a regular file) gives a usage error.
Status read_npy_elements(const std::string& path, const NpyHeader& header,
                         const std::function<void(uint64_t, const uint32_t*, size_t)>& consume);

}  // namespace omnib
