// Reading a fuzz input front to back: fixed-size fields first (a short input
// reads as zeros), the rest as a payload. Seeds in fuzz/corpus/ follow each
// target's layout (fuzz/make_seeds.py writes them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <type_traits>

namespace omnib::fuzz {

class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  // The next sizeof(T) bytes as a T (zeros past the end).
  template <typename T>
  T take() {
    static_assert(std::is_trivially_copyable_v<T>);
    T value{};
    const size_t n = size_ < sizeof(T) ? size_ : sizeof(T);
    std::memcpy(&value, data_, n);
    data_ += n;
    size_ -= n;
    return value;
  }
  // The next `n` bytes, or fewer at the end.
  std::span<const uint8_t> take_bytes(size_t n) {
    if (n > size_) n = size_;
    std::span<const uint8_t> out(data_, n);
    data_ += n;
    size_ -= n;
    return out;
  }
  std::span<const uint8_t> rest() { return take_bytes(size_); }
  bool empty() const { return size_ == 0; }

 private:
  const uint8_t* data_;
  size_t size_;
};

// A broken property of a parser that accepted its input: a finding.
[[noreturn]] inline void fail(const char* what) {
  std::fprintf(stderr, "fuzz property broken: %s\n", what);
  std::abort();
}

}  // namespace omnib::fuzz
