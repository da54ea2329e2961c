// One libfabric reliable-datagram endpoint per rank (fabric, domain, address
// vector, one completion queue, one endpoint), and the one thread that
// drives it: however many links a rank has, they share this endpoint and
// this thread.
//
// Why a thread of its own rather than the IoLoop's epoll: not every provider
// has a wait object to epoll on (efa and shm have none and must be polled),
// those that do need fi_trywait before every sleep, and with manual progress
// (tcp;ofi_rxm, verbs;ofi_rxm) sends advance only while someone reads the
// completion queue, which an IoLoop handler that must never block cannot
// promise. Making every libfabric call on this one thread also lets the
// domain run FI_THREAD_DOMAIN, without locks inside the provider. A run over
// --transport fabric never starts the IoLoop, so a rank still has exactly
// one network thread.
//
// Operations: an owner (a link, the device) makes an op, posts it, and is
// called back when it completes or fails. The endpoint keeps the owner
// alive while any of its ops is outstanding.
//
// The API lock: every libfabric call and the op table are made under
// api_mu_. The progress thread holds it while it works and lets go of it to
// sleep; a lane that posts a frame takes it, when it is free, to start the
// frame itself and read the completions that are in (pump_here), rather
// than wake the thread to do it: a wake-up each way per frame that a lane
// writing its own socket over kernel TCP does not pay. "Progress thread
// only" below means: under the API lock.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/base/status.h"
#include "engine/transport/fabric/fabric_domain.h"
#include "engine/transport/fabric/fabric_memory.h"
#include "engine/transport/fabric/fabric_op_table.h"
#include "engine/transport/fabric/fabric_wire.h"

namespace omnib {

// Where a link's messages go, both ways.
struct FabricPeer {
  fi_addr_t addr = FI_ADDR_UNSPEC;
  uint32_t my_conn = 0;    // messages to this end carry it in their tags
  uint32_t peer_conn = 0;  // messages to the peer carry it
  int rank = 0;
};

class FabricEndpoint {
 public:
  // Opens `provider` (find_fabric's names; empty: the first offered) with
  // its source address on `bind_host`, and starts the progress thread.
  static Result<std::shared_ptr<FabricEndpoint>> open(const std::string& provider, const std::string& bind_host);
  ~FabricEndpoint();
  FabricEndpoint(const FabricEndpoint&) = delete;
  FabricEndpoint& operator=(const FabricEndpoint&) = delete;

  // Stops the thread after outstanding sends had a moment to finish, and
  // closes everything; ops still out are dropped. Any thread but the
  // progress thread; later calls are no-ops, later posts fail.
  void shutdown();

  // This endpoint's address as libfabric names it (raw bytes).
  const std::string& address() const { return domain_->address(); }
  const std::string& provider() const { return domain_->provider(); }
  const std::string& domain() const { return domain_->domain_name(); }
  bool needs_local_registration() const { return domain_->needs_local_registration(); }
  // Test knob: behave as if the provider needed local registration
  // (registers everything, sends through registered staging).
  void force_local_registration() { domain_->force_local_registration(); }
  size_t max_message_bytes() const { return domain_->max_message_bytes(); }
  size_t iov_limit() const { return domain_->iov_limit(); }
  bool offers_device_memory() const { return domain_->offers_device_memory(); }
  bool polls() const { return domain_->wait_fd() < 0; }

  // Any thread: runs `work` on the progress thread soon (dropped after shutdown()).
  void run(std::function<void()> work);
  // Any thread: calls owner->pump() on the progress thread soon, once per
  // request burst (`queued` is the owner's flag, read and cleared here).
  void run_pump(std::shared_ptr<FabricOpOwner> owner, std::atomic<bool>& queued);
  // Any thread holding no link's lock: calls owner.pump() and reads the
  // completions here and now when the API lock is free; false (nothing
  // done) when it is not, or the endpoint is stopping: then run_pump.
  bool pump_here(FabricOpOwner& owner);
  bool on_progress_thread() const { return std::this_thread::get_id() == thread_id_; }

  // ---- Progress thread only.
  Result<fi_addr_t> insert_address(const std::string& raw);
  void remove_address(fi_addr_t addr);
  // A new op of `owner`; it lives until its completion has been delivered.
  FabricOp* make_op(std::shared_ptr<FabricOpOwner> owner, uint32_t kind, uint64_t arg, SlotPool::Slot slot = {});
  // 0, or -FI_EAGAIN (the provider's queues are full; the op is gone:
  // post again after retry_later's pump), or another negative fi_errno
  // (the op is gone). Memory must stay valid until the op completes.
  ssize_t send(FabricOp* op, fi_addr_t to, uint64_t tag, const iovec* iov, void** desc, size_t count);
  ssize_t recv(FabricOp* op, fi_addr_t from, uint64_t tag, uint64_t ignore, void* buf, size_t len, void* desc);
  void cancel(FabricOp* op);
  // Calls owner->pump() after the next round of completions.
  void retry_later(std::shared_ptr<FabricOpOwner> owner);
  // Small registered buffers of fabric_wire::kHeadBytes.
  Result<SlotPool::Slot> take_slot() { return slots_.take(registrar_); }
  void give_back(SlotPool::Slot s) { slots_.give_back(s); }
  const MemoryRegistrar& registrar() const { return registrar_; }
  // Called on every wake-up of the thread, at least every 50 ms.
  void set_tick(std::function<void()> tick);
  std::string error_text(ssize_t rc) const { return FabricDomain::error_text(rc); }

  std::string describe() const;

 private:
  explicit FabricEndpoint(std::unique_ptr<FabricDomain> domain);
  void run_thread();
  void wake_locked();  // mu_ held
  size_t drain_completions();
  void deliver_error();
  void idle_wait(bool retries_pending);
  void close_resources();
  void release_memory(fid_mr* mr);

  std::unique_ptr<FabricDomain> domain_;
  int event_fd_ = -1;  // wakes the thread for run()

  std::thread thread_;
  std::thread::id thread_id_;
  std::mutex api_mu_;  // the API lock (above)
  std::mutex mu_;
  std::vector<std::function<void()>> work_;  // guarded by mu_
  bool stopping_ = false;                    // guarded by mu_
  std::atomic<bool> closed_{false};
  std::atomic<bool> running_{false};  // the progress thread is between start and join
  std::once_flag shutdown_once_;

  // Progress thread only.
  FabricOpTable ops_;
  std::vector<std::shared_ptr<FabricOpOwner>> retry_;
  std::function<void()> tick_;
  std::chrono::steady_clock::time_point idle_since_ = std::chrono::steady_clock::time_point::max();
  MemoryRegistrar registrar_;
  SlotPool slots_{fabric_wire::kHeadBytes, 64};
};

}  // namespace omnib
