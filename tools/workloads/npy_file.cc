#include "tools/workloads/npy_file.h"

#include <algorithm>
#include <cstring>
#include <string_view>

#include "tools/config/regular_file.h"

namespace omnib {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
constexpr size_t kChunkElements = size_t{1} << 20;
constexpr uint64_t kElementBytes = 4;
constexpr const char* kHowToWrite = "write it with numpy.save";

const char* expected_descr(DType dtype) { return dtype == DType::kFloat32 ? "<f4" : "<i4"; }

Status bad_file(const std::string& name, const std::string& what) { return usage_error(name + ": " + what); }

// A short, printable excerpt of header text for a message.
std::string excerpt(std::string_view text) {
  constexpr size_t kMax = 60;
  std::string out;
  for (char c : text.substr(0, kMax)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return text.size() > kMax ? out + "..." : out;
}

// A cursor over the header dict: the small part of Python literal syntax
// that numpy.save writes, {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }.
class DictCursor {
 public:
  explicit DictCursor(std::string_view text) : text_(text) {}
  void skip_blanks() {
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\t' || text_[at_] == '\n')) ++at_;
  }
  bool eat(char c) {
    skip_blanks();
    if (at_ >= text_.size() || text_[at_] != c) return false;
    ++at_;
    return true;
  }
  bool at_end() {
    skip_blanks();
    return at_ >= text_.size();
  }
  char peek() const { return at_ < text_.size() ? text_[at_] : '\0'; }
  // A quoted string without escapes ('...' or "...").
  bool string(std::string_view& out) {
    skip_blanks();
    const char quote = peek();
    if (quote != '\'' && quote != '"') return false;
    const size_t close = text_.find(quote, at_ + 1);
    if (close == std::string_view::npos) return false;
    out = text_.substr(at_ + 1, close - at_ - 1);
    at_ = close + 1;
    return true;
  }
  bool word(std::string_view w) {
    skip_blanks();
    if (text_.substr(at_, w.size()) != w) return false;
    at_ += w.size();
    return true;
  }
  std::string_view rest() const { return text_.substr(at_); }
  void advance(size_t n) { at_ += n; }

 private:
  std::string_view text_;
  size_t at_ = 0;
};

// Parses `(d0, d1, ...)` into header.shape and header.count, checking every
// dimension before it is multiplied in.
Status parse_shape(DictCursor& in, const std::string& name, NpyHeader& h) {
  in.skip_blanks();
  const std::string_view text = in.rest();
  const size_t close = text.find(')');
  const std::string shown = "'shape' " + excerpt(close == std::string_view::npos ? text : text.substr(0, close + 1));
  if (!in.eat('(')) return bad_file(name, "has no tuple after 'shape' in its header: " + std::string(kHowToWrite));
  h.shape.clear();
  h.count = 1;
  if (in.eat(')')) return Status::ok();  // a 0-d array: one element
  while (true) {
    in.skip_blanks();
    const std::string_view digits = in.rest();
    size_t n = 0;
    uint64_t dim = 0;
    while (n < digits.size() && digits[n] >= '0' && digits[n] <= '9') {
      const uint64_t d = static_cast<uint64_t>(digits[n] - '0');
      if (__builtin_mul_overflow(dim, uint64_t{10}, &dim) || __builtin_add_overflow(dim, d, &dim))
        return bad_file(name, "has a dimension out of range in its " + shown + " (over 2^64-1)");
      ++n;
    }
    if (n == 0) {
      const bool negative = !digits.empty() && digits[0] == '-';
      return bad_file(name, std::string(negative ? "has a negative dimension" : "has a non-numeric dimension") +
                                " in its " + shown + ": " + kHowToWrite);
    }
    if (n > 1 && digits[0] == '0')
      return bad_file(name, "has a dimension with a leading zero in its " + shown + ": " + kHowToWrite);
    in.advance(n);
    if (dim == 0) return bad_file(name, "holds no elements (its " + shown + " has a zero dimension)");
    if (h.shape.size() == kNpyMaxDims)
      return bad_file(name, "has more than " + std::to_string(kNpyMaxDims) + " dimensions in its " + shown);
    if (__builtin_mul_overflow(h.count, dim, &h.count))
      return bad_file(name, "has more than 2^64 elements in its " + shown);
    h.shape.push_back(dim);
    if (in.eat(')')) return Status::ok();
    if (!in.eat(',')) return bad_file(name, "has a malformed " + shown + " in its header: " + kHowToWrite);
    if (in.eat(')')) return Status::ok();
  }
}

// Parses the dict into `h`: each of the three keys numpy writes, once.
Status parse_dict(std::string_view dict, DType dtype, const std::string& name, NpyHeader& h) {
  const std::string malformed = "has a malformed header (" + excerpt(dict) +
                                "); expected {'descr': ..., 'fortran_order': ..., 'shape': (...)}: " + kHowToWrite;
  DictCursor in(dict);
  if (!in.eat('{')) return bad_file(name, malformed);
  bool have_descr = false, have_order = false, have_shape = false;
  while (!in.eat('}')) {
    std::string_view key;
    if (!in.string(key) || !in.eat(':')) return bad_file(name, malformed);
    if (key == "descr" && !have_descr) {
      std::string_view descr;
      if (!in.string(descr))
        return bad_file(name, "has an element type that is not a plain one ('descr' " + excerpt(in.rest()) +
                                  "): save a plain array, e.g. numpy.save(path, a.astype('<f4'))");
      h.descr = std::string(descr);
      have_descr = true;
    } else if (key == "fortran_order" && !have_order) {
      if (in.word("True")) {
        h.fortran_order = true;
      } else if (in.word("False")) {
        h.fortran_order = false;
      } else {
        return bad_file(name, "has a 'fortran_order' that is neither True nor False");
      }
      have_order = true;
    } else if (key == "shape" && !have_shape) {
      OMNIB_RETURN_IF_ERROR(parse_shape(in, name, h));
      have_shape = true;
    } else {
      return bad_file(name, "has an unexpected or repeated key '" + excerpt(key) + "' in its header: " + kHowToWrite);
    }
    if (in.eat('}')) break;
    if (!in.eat(',')) return bad_file(name, malformed);
  }
  if (!in.at_end()) return bad_file(name, malformed);
  if (!have_descr) return bad_file(name, "has no element type ('descr') in its header");
  if (!have_order) return bad_file(name, "has no 'fortran_order' in its header");
  if (!have_shape) return bad_file(name, "has no 'shape' in its header");

  const std::string want = expected_descr(dtype);
  if (h.descr != want && h.descr != "=" + want.substr(1) && h.descr != "|" + want.substr(1))
    return bad_file(name, "holds elements of type '" + excerpt(h.descr) + "' but -d " + std::string(dtype_name(dtype)) +
                              " needs '" + want + "': convert it with numpy.save(path, a.astype('" + want + "'))");
  if (h.fortran_order && h.shape.size() > 1)
    return bad_file(name, "is in Fortran order: save a C-order array (numpy.save(path, numpy.ascontiguousarray(a)))");
  return Status::ok();
}

}  // namespace

Result<NpyHeader> parse_npy_header(std::span<const uint8_t> bytes, uint64_t file_bytes, DType dtype,
                                   const std::string& name) {
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic, kMagicLen) != 0)
    return bad_file(name, "is not a .npy file (no \\x93NUMPY magic): " + std::string(kHowToWrite));
  const int major = bytes[6];
  uint64_t header_len = 0;
  uint64_t header_start = 10;
  if (major == 1) {
    header_len = uint64_t{bytes[8]} | uint64_t{bytes[9]} << 8;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < kNpyMaxPrefixBytes) return bad_file(name, "is truncated inside its header");
    header_len = uint64_t{bytes[8]} | uint64_t{bytes[9]} << 8 | uint64_t{bytes[10]} << 16 | uint64_t{bytes[11]} << 24;
    header_start = kNpyMaxPrefixBytes;
  } else {
    return bad_file(name, "has .npy format version " + std::to_string(major) + ", which is not supported (1-3 are)");
  }
  if (header_len > kNpyMaxHeaderBytes)
    return bad_file(name, "announces a header of " + std::to_string(header_len) + " bytes, over the " +
                              std::to_string(kNpyMaxHeaderBytes) + " this reader accepts: " + kHowToWrite);
  if (bytes.size() - header_start < header_len) return bad_file(name, "is truncated inside its header");

  NpyHeader h;
  h.data_offset = header_start + header_len;
  const std::string_view dict(reinterpret_cast<const char*>(bytes.data() + header_start), header_len);
  OMNIB_RETURN_IF_ERROR(parse_dict(dict, dtype, name, h));

  uint64_t data_bytes = 0, need = 0;
  if (__builtin_mul_overflow(h.count, kElementBytes, &data_bytes) ||
      __builtin_add_overflow(h.data_offset, data_bytes, &need))
    return bad_file(name, "has a shape of " + std::to_string(h.count) + " elements, more than any file can hold");
  if (file_bytes < need)
    return bad_file(name, "is truncated: its shape needs " + std::to_string(need) + " bytes but it has " +
                              std::to_string(file_bytes));
  return h;
}

// What --input reads instead of something that is not a regular file.
constexpr const char* kNpyHint = "--input needs .npy files written by numpy.save";


Result<NpyHeader> read_npy_header(const std::string& path, DType dtype) {
  RegularFile f;
  OMNIB_RETURN_IF_ERROR(f.open_for_reading(path, kNpyHint));
  std::vector<uint8_t> head(static_cast<size_t>(std::min(f.size(), kNpyMaxPrefixBytes + kNpyMaxHeaderBytes)));
  auto got = f.read_at(0, head.data(), head.size());
  if (!got.is_ok()) return bad_file(path, got.status().message());
  head.resize(got.value());
  return parse_npy_header(head, f.size(), dtype, path);
}

Status read_npy_elements(const std::string& path, const NpyHeader& header,
                         const std::function<void(uint64_t, const uint32_t*, size_t)>& consume) {
  RegularFile f;
  OMNIB_RETURN_IF_ERROR(f.open_for_reading(path, kNpyHint));
  const std::string changed = "is shorter than its header says (was it changed while running?)";
  if (f.size() < header.data_offset || (f.size() - header.data_offset) / kElementBytes < header.count)
    return bad_file(path, changed);
  std::vector<uint32_t> chunk(static_cast<size_t>(std::min<uint64_t>(kChunkElements, header.count)));
  for (uint64_t first = 0; first < header.count;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(chunk.size(), header.count - first));
    auto got = f.read_at(header.data_offset + first * kElementBytes, chunk.data(), n * kElementBytes);
    if (!got.is_ok()) return bad_file(path, got.status().message());
    if (got.value() != n * kElementBytes) return bad_file(path, changed);
    consume(first, chunk.data(), n);
    first += n;
  }
  return Status::ok();
}

}  // namespace omnib
