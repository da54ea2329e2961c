#include "tools/workloads/npy_file.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>

namespace omnib {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
constexpr size_t kChunkElements = size_t{1} << 20;

const char* expected_descr(DType dtype) { return dtype == DType::kFloat32 ? "<f4" : "<i4"; }

Status bad_file(const std::string& path, const std::string& what) {
  return usage_error(path + ": " + what);
}

// The text after `'key':` in the header dict, with leading blanks removed.
std::string value_after(const std::string& dict, const std::string& key) {
  const std::string quoted = "'" + key + "'";
  size_t at = dict.find(quoted);
  if (at == std::string::npos) return "";
  at = dict.find(':', at + quoted.size());
  if (at == std::string::npos) return "";
  ++at;
  while (at < dict.size() && dict[at] == ' ') ++at;
  return dict.substr(at);
}

}  // namespace

Result<NpyHeader> read_npy_header(const std::string& path, DType dtype) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return bad_file(path, "cannot be opened (does it exist, and is it readable?)");
  char prefix[10];
  if (!f.read(prefix, sizeof prefix) || std::memcmp(prefix, kMagic, kMagicLen) != 0)
    return bad_file(path, "is not a .npy file (no \\x93NUMPY magic): write it with numpy.save");
  const int major = static_cast<unsigned char>(prefix[6]);
  uint64_t header_len = 0;
  uint64_t header_start = 10;
  if (major == 1) {
    header_len = static_cast<unsigned char>(prefix[8]) | (static_cast<unsigned char>(prefix[9]) << 8);
  } else if (major == 2 || major == 3) {
    char more[2];
    if (!f.read(more, 2)) return bad_file(path, "is truncated inside its header");
    header_len = static_cast<uint64_t>(static_cast<unsigned char>(prefix[8])) |
                 static_cast<uint64_t>(static_cast<unsigned char>(prefix[9])) << 8 |
                 static_cast<uint64_t>(static_cast<unsigned char>(more[0])) << 16 |
                 static_cast<uint64_t>(static_cast<unsigned char>(more[1])) << 24;
    header_start = 12;
  } else {
    return bad_file(path, "has .npy format version " + std::to_string(major) + ", which is not supported (1-3 are)");
  }
  if (header_len > (1u << 20)) return bad_file(path, "has an implausibly long header");
  std::string dict(header_len, '\0');
  if (!f.read(dict.data(), static_cast<std::streamsize>(header_len)))
    return bad_file(path, "is truncated inside its header");

  NpyHeader h;
  h.data_offset = header_start + header_len;
  const std::string descr = value_after(dict, "descr");
  if (descr.size() < 2 || descr[0] != '\'' || descr.find('\'', 1) == std::string::npos)
    return bad_file(path, "has no element type ('descr') in its header");
  h.descr = descr.substr(1, descr.find('\'', 1) - 1);
  std::string want = expected_descr(dtype);
  if (h.descr != want && !(h.descr == "=" + want.substr(1) || h.descr == "|" + want.substr(1)))
    return bad_file(path, "holds elements of type '" + h.descr + "' but -d " + std::string(dtype_name(dtype)) +
                              " needs '" + want + "': convert it with numpy.save(path, a.astype('" + want + "'))");
  const std::string order = value_after(dict, "fortran_order");
  if (order.rfind("True", 0) == 0) {
    h.fortran_order = true;
  } else if (order.rfind("False", 0) != 0) {
    return bad_file(path, "has no 'fortran_order' in its header");
  }
  std::string shape = value_after(dict, "shape");
  if (shape.empty() || shape[0] != '(' || shape.find(')') == std::string::npos)
    return bad_file(path, "has no 'shape' in its header");
  shape = shape.substr(1, shape.find(')') - 1);
  h.count = 1;
  for (size_t at = 0; at < shape.size();) {
    while (at < shape.size() && (shape[at] == ' ' || shape[at] == ',')) ++at;
    if (at >= shape.size()) break;
    char* end = nullptr;
    const unsigned long long dim = std::strtoull(shape.c_str() + at, &end, 10);
    if (end == shape.c_str() + at) return bad_file(path, "has a malformed 'shape' in its header");
    h.shape.push_back(dim);
    h.count *= dim;
    at = static_cast<size_t>(end - shape.c_str());
  }
  if (h.fortran_order && h.shape.size() > 1)
    return bad_file(path, "is in Fortran order: save a C-order array (numpy.save(path, numpy.ascontiguousarray(a)))");
  if (h.count == 0) return bad_file(path, "holds no elements");

  f.seekg(0, std::ios::end);
  const auto file_bytes = static_cast<uint64_t>(f.tellg());
  const uint64_t need = h.data_offset + h.count * 4;
  if (file_bytes < need)
    return bad_file(path, "is truncated: its shape needs " + std::to_string(need) + " bytes but it has " +
                              std::to_string(file_bytes));
  return h;
}

Status read_npy_elements(const std::string& path, const NpyHeader& header,
                         const std::function<void(uint64_t, const uint32_t*, size_t)>& consume) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return bad_file(path, "cannot be opened");
  f.seekg(static_cast<std::streamoff>(header.data_offset));
  std::vector<uint32_t> chunk(std::min<uint64_t>(kChunkElements, header.count));
  for (uint64_t first = 0; first < header.count;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(chunk.size(), header.count - first));
    if (!f.read(reinterpret_cast<char*>(chunk.data()), static_cast<std::streamsize>(n * 4)))
      return bad_file(path, "could not be read to the end (was it changed while running?)");
    consume(first, chunk.data(), n);
    first += n;
  }
  return Status::ok();
}

}  // namespace omnib
