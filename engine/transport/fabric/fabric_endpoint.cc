#include "engine/transport/fabric/fabric_endpoint.h"

#include <poll.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include "engine/transport/fabric/fabric_provider.h"

namespace omnib {
namespace {

using Clock = std::chrono::steady_clock;

// Completion queue entries: room for every receive a rank of a large job
// keeps posted, so that the provider never has to hold completions back.
constexpr size_t kCompletionQueueEntries = 16384;
// When the provider has no wait object: spin this long before napping.
constexpr auto kSpinBeforeNap = std::chrono::milliseconds(10);
// Sends still out when the endpoint shuts down get this long to finish.
constexpr auto kLinger = std::chrono::milliseconds(500);
constexpr auto kTickEvery = std::chrono::milliseconds(50);

Status fabric_error(const std::string& what, int rc) {
  return unavailable_error("libfabric " + what + ": " + fi_strerror(rc < 0 ? -rc : rc));
}

bool provider_offers_hmem(const std::string& provider) {
  auto with_hmem = find_fabric(provider, "");
  if (!with_hmem.is_ok()) return false;
  return (with_hmem.value()->caps & FI_HMEM) != 0;
}

}  // namespace

Result<std::shared_ptr<FabricEndpoint>> FabricEndpoint::open(const std::string& provider, const std::string& bind_host) {
  std::shared_ptr<FabricEndpoint> ep(new FabricEndpoint());
  Status s = ep->open_resources(provider, bind_host);
  if (!s.is_ok()) {
    ep->close_resources();
    ep->closed_ = true;
    return s;
  }
  ep->running_ = true;
  ep->thread_ = std::thread([raw = ep.get()] { raw->run_thread(); });
  ep->thread_id_ = ep->thread_.get_id();
  return ep;
}

Status FabricEndpoint::open_resources(const std::string& provider, const std::string& bind_host) {
  auto found = find_fabric(provider, bind_host);
  if (!found.is_ok()) return found.status();
  fi_info* info = found.value().get();
  provider_ = info->fabric_attr->prov_name;
  domain_ = info->domain_attr->name ? info->domain_attr->name : "";
  mr_local_ = (info->domain_attr->mr_mode & FI_MR_LOCAL) != 0;
  // Capped at the largest frame payload: no part of a frame is longer.
  max_message_ = std::min<size_t>(info->ep_attr->max_msg_size, wire::kMaxPayload);
  iov_limit_ = std::max<size_t>(1, info->tx_attr->iov_limit);
  hmem_ = provider_offers_hmem(provider_);
  registrar_.reg = [this](void* data, size_t bytes) { return register_memory(data, bytes); };
  registrar_.release = [this](fid_mr* mr) { release_memory(mr); };

  const std::string where = "provider " + provider_ + " (domain " + domain_ + ")";
  int rc = fi_fabric(info->fabric_attr, &fabric_, nullptr);
  if (rc) return fabric_error("fi_fabric for " + where, rc);
  rc = fi_domain(fabric_, info, &domain_fid_, nullptr);
  if (rc) return fabric_error("fi_domain for " + where, rc);
  fi_cq_attr cq_attr{};
  cq_attr.format = FI_CQ_FORMAT_TAGGED;
  cq_attr.size = kCompletionQueueEntries;
  cq_attr.wait_obj = FI_WAIT_FD;
  rc = fi_cq_open(domain_fid_, &cq_attr, &cq_, nullptr);
  if (rc == 0 && fi_control(&cq_->fid, FI_GETWAIT, &wait_fd_) != 0) {
    fi_close(&cq_->fid);
    cq_ = nullptr;
    rc = -FI_ENOSYS;
  }
  if (rc != 0) {
    // No wait object (efa, shm): the thread polls.
    wait_fd_ = -1;
    cq_attr.wait_obj = FI_WAIT_NONE;
    rc = fi_cq_open(domain_fid_, &cq_attr, &cq_, nullptr);
    if (rc) return fabric_error("fi_cq_open for " + where, rc);
  }
  fi_av_attr av_attr{};
  av_attr.type = FI_AV_UNSPEC;
  rc = fi_av_open(domain_fid_, &av_attr, &av_, nullptr);
  if (rc) return fabric_error("fi_av_open for " + where, rc);
  rc = fi_endpoint(domain_fid_, info, &ep_, nullptr);
  if (rc) return fabric_error("fi_endpoint for " + where, rc);
  rc = fi_ep_bind(ep_, &av_->fid, 0);
  if (rc == 0) rc = fi_ep_bind(ep_, &cq_->fid, FI_TRANSMIT | FI_RECV);
  if (rc) return fabric_error("fi_ep_bind for " + where, rc);
  rc = fi_enable(ep_);
  if (rc) return fabric_error("fi_enable for " + where, rc);
  char name[256];
  size_t len = sizeof(name);
  rc = fi_getname(&ep_->fid, name, &len);
  if (rc) return fabric_error("fi_getname for " + where, rc);
  address_.assign(name, len);
  event_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (event_fd_ < 0) return internal_error(std::string("eventfd: ") + std::strerror(errno));
  return Status::ok();
}

FabricEndpoint::~FabricEndpoint() {
  // The last reference must not go on the progress thread (it cannot join itself).
  if (on_progress_thread()) {
    thread_.detach();
    return;
  }
  shutdown();
}

void FabricEndpoint::shutdown() {
  std::call_once(shutdown_once_, [this] {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
      wake_locked();
    }
    if (thread_.joinable()) thread_.join();
    running_ = false;
    close_resources();
  });
}

void FabricEndpoint::close_resources() {
  // Closing the endpoint first ends every operation still out.
  if (ep_) fi_close(&ep_->fid);
  ep_ = nullptr;
  slots_.release_all(registrar_);
  for (fid_mr* mr : registrations_) fi_close(&mr->fid);
  registrations_.clear();
  if (av_) fi_close(&av_->fid);
  if (cq_) fi_close(&cq_->fid);
  if (domain_fid_) fi_close(&domain_fid_->fid);
  if (fabric_) fi_close(&fabric_->fid);
  av_ = nullptr;
  cq_ = nullptr;
  domain_fid_ = nullptr;
  fabric_ = nullptr;
  {
    std::lock_guard lock(mu_);
    if (event_fd_ >= 0) close(event_fd_);
    event_fd_ = -1;
  }
  closed_ = true;
  // Owners may go with their last op; they find the endpoint closed.
  auto ops = std::move(live_ops_);
  live_ops_.clear();
  retry_.clear();
  for (auto& [op, owner] : ops) delete op;
  ops.clear();
}

void FabricEndpoint::run(std::function<void()> work) {
  std::lock_guard lock(mu_);
  if (stopping_ && !on_progress_thread()) return;
  work_.push_back(std::move(work));
  wake_locked();
}

void FabricEndpoint::wake_locked() {
  // Under mu_: close_resources() closes the descriptor under it too.
  if (event_fd_ < 0) return;
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(event_fd_, &one, sizeof(one));
}

void FabricEndpoint::run_pump(std::shared_ptr<FabricOpOwner> owner, std::atomic<bool>& queued) {
  if (queued.exchange(true)) return;
  run([owner = std::move(owner), &queued] {
    queued = false;
    owner->pump();
  });
}

void FabricEndpoint::set_tick(std::function<void()> tick) {
  run([this, tick = std::move(tick)]() mutable { tick_ = std::move(tick); });
}

Result<fi_addr_t> FabricEndpoint::insert_address(const std::string& raw) {
  if (closed_) return unavailable_error("the fabric endpoint is closed");
  fi_addr_t addr = FI_ADDR_UNSPEC;
  int n = fi_av_insert(av_, raw.data(), 1, &addr, 0, nullptr);
  if (n != 1) return unavailable_error("libfabric could not add a peer address to provider " + provider_ + "'s table");
  return addr;
}

void FabricEndpoint::remove_address(fi_addr_t addr) {
  if (!closed_) fi_av_remove(av_, &addr, 1, 0);
}

FabricOp* FabricEndpoint::make_op(std::shared_ptr<FabricOpOwner> owner, uint32_t kind, uint64_t arg,
                                  SlotPool::Slot slot) {
  auto* op = new FabricOp{{}, owner.get(), kind, arg, slot, false};
  live_ops_.emplace(op, std::move(owner));
  return op;
}

ssize_t FabricEndpoint::send(FabricOp* op, fi_addr_t to, uint64_t tag, const iovec* iov, void** desc, size_t count) {
  ssize_t rc = closed_ ? -FI_ESHUTDOWN : fi_tsendv(ep_, iov, desc, count, to, tag, op);
  if (rc != 0) {
    live_ops_.erase(op);
    delete op;
    return rc;
  }
  op->is_send = true;
  ++live_sends_;
  return 0;
}

ssize_t FabricEndpoint::recv(FabricOp* op, fi_addr_t from, uint64_t tag, uint64_t ignore, void* buf, size_t len,
                             void* desc) {
  ssize_t rc = closed_ ? -FI_ESHUTDOWN : fi_trecv(ep_, buf, len, desc, from, tag, ignore, op);
  if (rc != 0) {
    live_ops_.erase(op);
    delete op;
  }
  return rc;
}

void FabricEndpoint::cancel(FabricOp* op) {
  if (!closed_ && live_ops_.count(op)) fi_cancel(&ep_->fid, op);
}

void FabricEndpoint::retry_later(std::shared_ptr<FabricOpOwner> owner) { retry_.push_back(std::move(owner)); }

std::string FabricEndpoint::error_text(ssize_t rc) const { return fi_strerror(static_cast<int>(rc < 0 ? -rc : rc)); }

Result<fid_mr*> FabricEndpoint::register_memory(void* data, size_t bytes) {
  if (!mr_local_) return static_cast<fid_mr*>(nullptr);
  if (closed_) return unavailable_error("the fabric endpoint is closed");
  fid_mr* mr = nullptr;
  // Keys matter only for remote access (which we never give), but providers
  // that choose no keys themselves want them unique.
  int rc = fi_mr_reg(domain_fid_, data, bytes, FI_SEND | FI_RECV, 0, ++next_key_, 0, &mr, nullptr);
  if (rc) return fabric_error("could not register " + std::to_string(bytes) + " bytes with provider " + provider_ +
                              " (raise the locked-memory limit, ulimit -l)", rc);
  registrations_.insert(mr);
  return mr;
}

void FabricEndpoint::release_memory(fid_mr* mr) {
  if (closed_) return;
  if (running_ && !on_progress_thread()) {
    run([this, mr] { release_memory(mr); });
    return;
  }
  if (registrations_.erase(mr)) fi_close(&mr->fid);
}

void FabricEndpoint::run_thread() {
  std::vector<std::function<void()>> work;
  auto last_tick = Clock::now();
  auto stop_at = Clock::time_point::max();
  while (true) {
    bool stopping;
    {
      std::lock_guard lock(mu_);
      work.swap(work_);
      stopping = stopping_;
    }
    if (stopping && stop_at == Clock::time_point::max()) stop_at = Clock::now() + kLinger;
    bool busy = !work.empty();
    for (auto& w : work) w();
    work.clear();
    busy |= drain_completions() > 0;
    if (!retry_.empty()) {
      auto again = std::move(retry_);
      retry_.clear();
      for (auto& owner : again) owner->pump();
    }
    const auto now = Clock::now();
    if (tick_ && now - last_tick >= kTickEvery) {
      last_tick = now;
      tick_();
    }
    if (stopping && (live_sends_ == 0 || now >= stop_at)) return;
    if (busy) idle_since_ = Clock::time_point::max();
    else idle_wait(!retry_.empty() || stopping);
  }
}

size_t FabricEndpoint::drain_completions() {
  size_t total = 0;
  fi_cq_tagged_entry entries[32];
  while (true) {
    const ssize_t n = fi_cq_read(cq_, entries, 32);
    if (n == -FI_EAVAIL) {
      deliver_error();
      ++total;
      continue;
    }
    if (n <= 0) return total;
    for (ssize_t i = 0; i < n; ++i) {
      auto* op = static_cast<FabricOp*>(entries[i].op_context);
      auto it = live_ops_.find(op);
      if (it == live_ops_.end()) continue;
      std::shared_ptr<FabricOpOwner> owner = std::move(it->second);
      live_ops_.erase(it);
      if (op->is_send) --live_sends_;
      owner->on_done(*op, entries[i].len, entries[i].tag);
      delete op;
    }
    total += static_cast<size_t>(n);
    if (n < 32) return total;
  }
}

void FabricEndpoint::deliver_error() {
  fi_cq_err_entry err{};
  if (fi_cq_readerr(cq_, &err, 0) != 1) return;
  auto* op = static_cast<FabricOp*>(err.op_context);
  auto it = live_ops_.find(op);
  if (it == live_ops_.end()) return;
  std::shared_ptr<FabricOpOwner> owner = std::move(it->second);
  live_ops_.erase(it);
  if (op->is_send) --live_sends_;
  char buf[256] = {0};
  const char* text = fi_cq_strerror(cq_, err.prov_errno, err.err_data, buf, sizeof(buf));
  std::string why = fi_strerror(err.err);
  if (text && *text) why += std::string(" (") + text + ")";
  owner->on_failed(*op, err.err == FI_ECANCELED, why);
  delete op;
}

void FabricEndpoint::idle_wait(bool retries_pending) {
  if (retries_pending) return;
  pollfd fds[2] = {{event_fd_, POLLIN, 0}, {wait_fd_, POLLIN, 0}};
  int timeout_ms = static_cast<int>(kTickEvery.count());
  if (wait_fd_ >= 0) {
    // Sleeping on the wait object is only safe once fi_trywait says nothing is pending.
    fid* cq_fid = &cq_->fid;
    if (fi_trywait(fabric_, &cq_fid, 1) != FI_SUCCESS) return;
  } else {
    const auto now = Clock::now();
    if (idle_since_ == Clock::time_point::max()) idle_since_ = now;
    if (now - idle_since_ < kSpinBeforeNap) {
      sched_yield();
      return;
    }
    timeout_ms = 1;  // nap, then poll the provider again
  }
  const int rc = poll(fds, wait_fd_ >= 0 ? 2 : 1, timeout_ms);
  if (rc > 0 && (fds[0].revents & POLLIN)) {
    uint64_t drained;
    while (read(event_fd_, &drained, sizeof(drained)) > 0) {
    }
  }
}

std::string FabricEndpoint::describe() const {
  const std::string frames =
      mr_local_ ? "copied through registered staging (the provider needs local registration)"
                : "posted ones sent from the caller's memory when they have at most " + std::to_string(iov_limit_) +
                      " parts, the others copied (the provider needs no registration)";
  return "provider " + provider_ + ", domain " + domain_ + "; frames: " + frames + "; progress: one thread, " +
         (wait_fd_ >= 0 ? "sleeping on the completion queue's fd" : "polling") + "; device memory: " +
         (hmem_ ? "staged in host memory (the provider offers FI_HMEM; registering GPU memory directly is untested)"
                : "staged in host memory (the provider has no FI_HMEM)");
}

}  // namespace omnib
