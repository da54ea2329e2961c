// The operations a rank's fabric endpoint has handed to its provider and
// not yet seen complete, each with the owner (a link, the opener) that is
// told how it ended. The table keeps every owner alive while any of its
// operations is out, so a connection may go before its last receive is
// canceled.
//
// Threads: whoever drives the endpoint (fabric_endpoint.h), one at a time.
#pragma once

#include <rdma/fabric.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <unordered_map>

#include "engine/transport/fabric/fabric_memory.h"

namespace omnib {

class FabricOpOwner;

// One outstanding operation; the provider gets `this` as its context.
struct FabricOp {
  fi_context2 ctx;  // first: providers that ask for FI_CONTEXT(2) write here
  FabricOpOwner* owner;
  uint32_t kind;  // owner-defined
  uint64_t arg;   // owner-defined
  SlotPool::Slot slot;  // the slot this op uses, if any
  bool is_send;
};
static_assert(std::is_standard_layout_v<FabricOp>, "the provider's context pointer is the op's address");

class FabricOpOwner {
 public:
  virtual ~FabricOpOwner() = default;
  // A receive took `len` bytes with `tag`, or a send finished.
  virtual void on_done(FabricOp& op, size_t len, uint64_t tag) = 0;
  // The op failed. `canceled`: after cancel().
  virtual void on_failed(FabricOp& op, bool canceled, const std::string& why) = 0;
  // After run_pump() or retry_later(): do what is pending.
  virtual void pump() = 0;
};

class FabricOpTable {
 public:
  FabricOpTable() = default;
  FabricOpTable(const FabricOpTable&) = delete;
  FabricOpTable& operator=(const FabricOpTable&) = delete;
  ~FabricOpTable() { clear(); }

  // A new op of `owner`; it lives until its completion has been delivered.
  FabricOp* make(std::shared_ptr<FabricOpOwner> owner, uint32_t kind, uint64_t arg, SlotPool::Slot slot);
  // The provider took `op` (a send, when `is_send`).
  void posted(FabricOp* op, bool is_send);
  // The provider refused `op`: it is gone.
  void refused(FabricOp* op);
  bool contains(FabricOp* op) const { return live_.count(op) != 0; }
  size_t sends_out() const { return sends_out_; }
  // Tells `op`'s owner it finished (`len` bytes, `tag`), and forgets it.
  void done(FabricOp* op, size_t len, uint64_t tag);
  // Tells `op`'s owner it failed, and forgets it.
  void failed(FabricOp* op, bool canceled, const std::string& why);
  // Forgets every op without telling its owner (the endpoint closed).
  void clear();

 private:
  // Takes `op` out of the table: its owner, or null for an op not in it.
  std::shared_ptr<FabricOpOwner> take(FabricOp* op);

  std::unordered_map<FabricOp*, std::shared_ptr<FabricOpOwner>> live_;
  size_t sends_out_ = 0;
};

}  // namespace omnib
