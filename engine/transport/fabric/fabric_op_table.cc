#include "engine/transport/fabric/fabric_op_table.h"

namespace omnib {

FabricOp* FabricOpTable::make(std::shared_ptr<FabricOpOwner> owner, uint32_t kind, uint64_t arg, SlotPool::Slot slot) {
  auto* op = new FabricOp{{}, owner.get(), kind, arg, slot, false};
  live_.emplace(op, std::move(owner));
  return op;
}

void FabricOpTable::posted(FabricOp* op, bool is_send) {
  op->is_send = is_send;
  if (is_send) ++sends_out_;
}

void FabricOpTable::refused(FabricOp* op) {
  live_.erase(op);
  delete op;
}

std::shared_ptr<FabricOpOwner> FabricOpTable::take(FabricOp* op) {
  auto it = live_.find(op);
  if (it == live_.end()) return nullptr;
  std::shared_ptr<FabricOpOwner> owner = std::move(it->second);
  live_.erase(it);
  if (op->is_send) --sends_out_;
  return owner;
}

void FabricOpTable::done(FabricOp* op, size_t len, uint64_t tag) {
  // The owner may go with its last op: it is held until the call returns.
  if (auto owner = take(op)) {
    owner->on_done(*op, len, tag);
    delete op;
  }
}

void FabricOpTable::failed(FabricOp* op, bool canceled, const std::string& why) {
  if (auto owner = take(op)) {
    owner->on_failed(*op, canceled, why);
    delete op;
  }
}

void FabricOpTable::clear() {
  // Owners may go with their last op; they find the endpoint closed.
  auto ops = std::move(live_);
  live_.clear();
  sends_out_ = 0;
  for (auto& [op, owner] : ops) delete op;
}

}  // namespace omnib
