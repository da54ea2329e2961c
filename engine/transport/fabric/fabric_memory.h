// Memory the libfabric transport hands to its provider, registered once
// where the provider needs local registration (FI_MR_LOCAL): small
// fixed-size slots (frame heads, opening and control messages) carved from
// slabs registered one slab at a time, and growable byte buffers (send
// staging, receive bounce buffers) registered again only when they move.
//
// Threads: registering and releasing happen under the endpoint's API lock
// (the domain runs FI_THREAD_DOMAIN; fabric_endpoint.h), on its progress
// thread or a lane that holds the lock; a RegisteredBytes may be filled
// anywhere.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "engine/base/status.h"
#include "engine/base/uninit_buffer.h"

struct fid_mr;

namespace omnib {

// Registers [data, data + bytes) with the domain, or nullptr when the
// provider needs no registration; Release undoes one registration.
struct MemoryRegistrar {
  std::function<Result<fid_mr*>(void* data, size_t bytes)> reg;
  std::function<void(fid_mr*)> release;
};

// The descriptor a provider wants beside a registered buffer (fi_mr_desc).
void* descriptor_of(fid_mr* mr);

class SlotPool {
 public:
  struct Slot {
    uint8_t* data = nullptr;
    void* desc = nullptr;
  };
  SlotPool(size_t slot_bytes, size_t slots_per_slab) : slot_bytes_(slot_bytes), per_slab_(slots_per_slab) {}
  SlotPool(const SlotPool&) = delete;
  SlotPool& operator=(const SlotPool&) = delete;
  // Releases the slabs' registrations (slots still out must be unused by then).
  void release_all(const MemoryRegistrar& registrar);

  size_t slot_bytes() const { return slot_bytes_; }
  Result<Slot> take(const MemoryRegistrar& registrar);
  void give_back(Slot s) { free_.push_back(s); }

 private:
  struct Slab {
    std::unique_ptr<uint8_t[]> memory;
    fid_mr* mr = nullptr;
  };
  size_t slot_bytes_;
  size_t per_slab_;
  std::vector<Slab> slabs_;
  std::vector<Slot> free_;
};

// A growable buffer and, where needed, its registration. The registration
// follows the buffer: ensure_registered() registers it again only after the
// buffer moved or grew past what was registered.
class RegisteredBytes {
 public:
  RegisteredBytes() = default;
  RegisteredBytes(RegisteredBytes&& o) noexcept { *this = std::move(o); }
  RegisteredBytes& operator=(RegisteredBytes&& o) noexcept;
  ~RegisteredBytes();

  UninitBytes& bytes() { return bytes_; }
  const UninitBytes& bytes() const { return bytes_; }
  // Under the endpoint's API lock.
  Status ensure_registered(const MemoryRegistrar& registrar);
  void* desc() const { return descriptor_of(mr_); }

 private:
  void drop();
  UninitBytes bytes_;
  fid_mr* mr_ = nullptr;
  const MemoryRegistrar* registrar_ = nullptr;  // who registered mr_
  const uint8_t* registered_at_ = nullptr;
  size_t registered_bytes_ = 0;
};

}  // namespace omnib
