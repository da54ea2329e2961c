#include "engine/transport/fabric/fabric_memory.h"

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

namespace omnib {

void* descriptor_of(fid_mr* mr) { return mr ? fi_mr_desc(mr) : nullptr; }

void SlotPool::release_all(const MemoryRegistrar& registrar) {
  for (auto& slab : slabs_)
    if (slab.mr) registrar.release(slab.mr);
  slabs_.clear();
  free_.clear();
}

Result<SlotPool::Slot> SlotPool::take(const MemoryRegistrar& registrar) {
  if (free_.empty()) {
    Slab slab;
    const size_t bytes = slot_bytes_ * per_slab_;
    slab.memory.reset(new uint8_t[bytes]);
    auto mr = registrar.reg(slab.memory.get(), bytes);
    if (!mr.is_ok()) return mr.status();
    slab.mr = mr.value();
    for (size_t i = 0; i < per_slab_; ++i) free_.push_back({slab.memory.get() + i * slot_bytes_, descriptor_of(slab.mr)});
    slabs_.push_back(std::move(slab));
  }
  Slot s = free_.back();
  free_.pop_back();
  return s;
}

RegisteredBytes& RegisteredBytes::operator=(RegisteredBytes&& o) noexcept {
  if (this == &o) return *this;
  drop();
  bytes_ = std::move(o.bytes_);
  mr_ = o.mr_;
  registrar_ = o.registrar_;
  registered_at_ = o.registered_at_;
  registered_bytes_ = o.registered_bytes_;
  o.mr_ = nullptr;
  o.registrar_ = nullptr;
  o.registered_at_ = nullptr;
  o.registered_bytes_ = 0;
  return *this;
}

RegisteredBytes::~RegisteredBytes() { drop(); }

void RegisteredBytes::drop() {
  if (mr_ && registrar_) registrar_->release(mr_);
  mr_ = nullptr;
  registrar_ = nullptr;
}

Status RegisteredBytes::ensure_registered(const MemoryRegistrar& registrar) {
  if (bytes_.empty()) return Status::ok();
  if (registrar_ == &registrar && registered_at_ == bytes_.data() && registered_bytes_ >= bytes_.size())
    return Status::ok();
  drop();
  // The whole capacity: a later, larger fill of the same memory needs no new registration.
  auto mr = registrar.reg(bytes_.data(), bytes_.capacity());
  if (!mr.is_ok()) return mr.status();
  mr_ = mr.value();
  registrar_ = &registrar;
  registered_at_ = bytes_.data();
  registered_bytes_ = bytes_.capacity();
  return Status::ok();
}

}  // namespace omnib
