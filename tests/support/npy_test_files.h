// Writing .npy files for tests, byte for byte as numpy.save does, with any
// header text (so crafted headers can be written too).
#pragma once

#include <cstdint>
#include <fstream>
#include <string>

namespace omnib::testing {

// The bytes of an .npy file: format `version` (1 or 2) with the header dict
// {'descr': DESCR, 'fortran_order': ..., 'shape': SHAPE, }, then `data`.
inline std::string npy_bytes(const std::string& descr, const std::string& shape, const std::string& data,
                             bool fortran = false, int version = 1) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
                     ", 'shape': " + shape + ", }";
  const size_t prefix = version == 1 ? 10 : 12;
  while ((prefix + dict.size() + 1) % 64 != 0) dict += ' ';
  dict += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(version);
  out += '\0';
  const auto len = static_cast<uint32_t>(dict.size());
  for (size_t i = 0; i < (version == 1 ? 2u : 4u); ++i) out += static_cast<char>((len >> (8 * i)) & 0xff);
  return out + dict + data;
}

inline void write_npy(const std::string& path, const std::string& descr, const std::string& shape, const void* data,
                      size_t bytes, bool fortran = false, int version = 1) {
  std::ofstream(path, std::ios::binary)
      << npy_bytes(descr, shape, std::string(static_cast<const char*>(data), bytes), fortran, version);
}

}  // namespace omnib::testing
