// A byte vector whose resize() leaves new bytes uninitialized: for buffers
// that are always overwritten right after they grow (received frames, packed
// blocks), where std::vector's zero fill would be a wasted pass over memory.
#pragma once

#include <cstdint>
#include <memory>
#include <new>
#include <vector>

namespace omnib {

template <typename T>
struct DefaultInitAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  using std::allocator<T>::allocator;
  // Value-initialization (what resize asks for) becomes default-initialization.
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

using UninitBytes = std::vector<uint8_t, DefaultInitAllocator<uint8_t>>;

}  // namespace omnib
