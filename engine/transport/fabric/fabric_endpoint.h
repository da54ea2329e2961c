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
// called back on this thread when it completes or fails. The endpoint keeps
// the owner alive while any of its ops is outstanding.
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
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "engine/base/status.h"
#include "engine/transport/fabric/fabric_memory.h"
#include "engine/transport/fabric/fabric_wire.h"

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
  // On the progress thread: a receive took `len` bytes with `tag`, or a send finished.
  virtual void on_done(FabricOp& op, size_t len, uint64_t tag) = 0;
  // On the progress thread: the op failed. `canceled`: after cancel().
  virtual void on_failed(FabricOp& op, bool canceled, const std::string& why) = 0;
  // On the progress thread, after run_pump() or retry_later(): do what is pending.
  virtual void pump() = 0;
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
  const std::string& address() const { return address_; }
  const std::string& provider() const { return provider_; }
  const std::string& domain() const { return domain_; }
  bool needs_local_registration() const { return mr_local_; }
  // Test knob: behave as if the provider needed local registration
  // (registers everything, sends through registered staging).
  void force_local_registration() { mr_local_ = true; }
  size_t max_message_bytes() const { return max_message_; }
  size_t iov_limit() const { return iov_limit_; }
  bool offers_device_memory() const { return hmem_; }
  bool polls() const { return wait_fd_ < 0; }

  // Any thread: runs `work` on the progress thread soon (dropped after shutdown()).
  void run(std::function<void()> work);
  // Any thread: calls owner->pump() on the progress thread soon, once per
  // request burst (`queued` is the owner's flag, read and cleared here).
  void run_pump(std::shared_ptr<FabricOpOwner> owner, std::atomic<bool>& queued);
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
  std::string error_text(ssize_t rc) const;

  std::string describe() const;

 private:
  FabricEndpoint() = default;
  Status open_resources(const std::string& provider, const std::string& bind_host);
  void run_thread();
  void wake_locked();  // mu_ held
  size_t drain_completions();
  void deliver_error();
  void idle_wait(bool retries_pending);
  void close_resources();
  Result<fid_mr*> register_memory(void* data, size_t bytes);
  void release_memory(fid_mr* mr);

  fid_fabric* fabric_ = nullptr;
  fid_domain* domain_fid_ = nullptr;
  fid_av* av_ = nullptr;
  fid_cq* cq_ = nullptr;
  fid_ep* ep_ = nullptr;
  int wait_fd_ = -1;   // the CQ's wait object; -1: the provider must be polled
  int event_fd_ = -1;  // wakes the thread for run()
  std::string address_, provider_, domain_;
  bool mr_local_ = false;
  bool hmem_ = false;
  size_t max_message_ = 0;
  size_t iov_limit_ = 1;

  std::thread thread_;
  std::thread::id thread_id_;
  std::mutex mu_;
  std::vector<std::function<void()>> work_;  // guarded by mu_
  bool stopping_ = false;                    // guarded by mu_
  std::atomic<bool> closed_{false};
  std::atomic<bool> running_{false};  // the progress thread is between start and join
  std::once_flag shutdown_once_;

  // Progress thread only.
  std::unordered_map<FabricOp*, std::shared_ptr<FabricOpOwner>> live_ops_;
  size_t live_sends_ = 0;
  std::vector<std::shared_ptr<FabricOpOwner>> retry_;
  std::function<void()> tick_;
  std::chrono::steady_clock::time_point idle_since_ = std::chrono::steady_clock::time_point::max();
  std::unordered_set<fid_mr*> registrations_;
  uint64_t next_key_ = 0;
  MemoryRegistrar registrar_;
  SlotPool slots_{fabric_wire::kHeadBytes, 64};
};

}  // namespace omnib
