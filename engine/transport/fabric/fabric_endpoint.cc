#include "engine/transport/fabric/fabric_endpoint.h"

#include <poll.h>
#include <pthread.h>
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
#include "engine/transport/transport_cpu.h"

namespace omnib {
namespace {

using Clock = std::chrono::steady_clock;

// When the provider has no wait object: spin this long before napping.
constexpr auto kSpinBeforeNap = std::chrono::milliseconds(10);
// Sends still out when the endpoint shuts down get this long to finish.
constexpr auto kLinger = std::chrono::milliseconds(500);
constexpr auto kTickEvery = std::chrono::milliseconds(50);

}  // namespace

Result<std::shared_ptr<FabricEndpoint>> FabricEndpoint::open(const std::string& provider, const std::string& bind_host) {
  auto domain = FabricDomain::open(provider, bind_host);
  if (!domain.is_ok()) return domain.status();
  std::shared_ptr<FabricEndpoint> ep(new FabricEndpoint(domain.take()));
  if (ep->event_fd_ < 0) {
    ep->close_resources();
    return internal_error(std::string("eventfd: ") + std::strerror(errno));
  }
  ep->running_ = true;
  ep->thread_ = std::thread([raw = ep.get()] { raw->run_thread(); });
  ep->thread_id_ = ep->thread_.get_id();
  return ep;
}

FabricEndpoint::FabricEndpoint(std::unique_ptr<FabricDomain> domain)
    : domain_(std::move(domain)), event_fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  registrar_.reg = [this](void* data, size_t bytes) { return domain_->register_memory(data, bytes); };
  registrar_.release = [this](fid_mr* mr) { release_memory(mr); };
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
  std::lock_guard api(api_mu_);
  domain_->close();
  slots_.release_all(registrar_);
  {
    std::lock_guard lock(mu_);
    if (event_fd_ >= 0) close(event_fd_);
    event_fd_ = -1;
  }
  closed_ = true;
  ops_.clear();
  retry_.clear();
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

bool FabricEndpoint::pump_here(FabricOpOwner& owner) {
  std::unique_lock api(api_mu_, std::try_to_lock);
  if (!api.owns_lock() || closed_) return false;
  {
    std::lock_guard lock(mu_);
    if (stopping_) return false;
  }
  TransportWork work;
  owner.pump();
  drain_completions();
  // A refused post waits for progress, which the thread makes.
  if (!retry_.empty()) {
    std::lock_guard lock(mu_);
    wake_locked();
  }
  return true;
}

void FabricEndpoint::set_tick(std::function<void()> tick) {
  run([this, tick = std::move(tick)]() mutable { tick_ = std::move(tick); });
}

Result<fi_addr_t> FabricEndpoint::insert_address(const std::string& raw) { return domain_->insert_address(raw); }

void FabricEndpoint::remove_address(fi_addr_t addr) { domain_->remove_address(addr); }

FabricOp* FabricEndpoint::make_op(std::shared_ptr<FabricOpOwner> owner, uint32_t kind, uint64_t arg,
                                  SlotPool::Slot slot) {
  return ops_.make(std::move(owner), kind, arg, slot);
}

ssize_t FabricEndpoint::send(FabricOp* op, fi_addr_t to, uint64_t tag, const iovec* iov, void** desc, size_t count) {
  const ssize_t rc = closed_ ? -FI_ESHUTDOWN : fi_tsendv(domain_->endpoint(), iov, desc, count, to, tag, op);
  if (rc != 0) ops_.refused(op);
  else ops_.posted(op, true);
  return rc;
}

ssize_t FabricEndpoint::recv(FabricOp* op, fi_addr_t from, uint64_t tag, uint64_t ignore, void* buf, size_t len,
                             void* desc) {
  const ssize_t rc = closed_ ? -FI_ESHUTDOWN : fi_trecv(domain_->endpoint(), buf, len, desc, from, tag, ignore, op);
  if (rc != 0) ops_.refused(op);
  else ops_.posted(op, false);
  return rc;
}

void FabricEndpoint::cancel(FabricOp* op) {
  if (!closed_ && ops_.contains(op)) fi_cancel(&domain_->endpoint()->fid, op);
}

void FabricEndpoint::retry_later(std::shared_ptr<FabricOpOwner> owner) { retry_.push_back(std::move(owner)); }

void FabricEndpoint::release_memory(fid_mr* mr) {
  if (closed_) return;
  if (running_ && !on_progress_thread()) {
    run([this, mr] { release_memory(mr); });
    return;
  }
  domain_->release_memory(mr);
}

void FabricEndpoint::run_thread() {
  pthread_setname_np(pthread_self(), "omnib fabric");  // for top -H, perf and debuggers
  register_network_thread();
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
    bool retries_pending;
    auto now = Clock::now();
    {
      std::lock_guard api(api_mu_);
      for (auto& w : work) w();
      work.clear();
      busy |= drain_completions() > 0;
      if (!retry_.empty()) {
        auto again = std::move(retry_);
        retry_.clear();
        for (auto& owner : again) owner->pump();
      }
      now = Clock::now();
      if (tick_ && now - last_tick >= kTickEvery) {
        last_tick = now;
        tick_();
      }
      if (stopping && (ops_.sends_out() == 0 || now >= stop_at)) {
        retire_network_thread();
        return;
      }
      retries_pending = !retry_.empty();
    }
    if (busy) idle_since_ = Clock::time_point::max();
    else idle_wait(retries_pending || stopping);
  }
}

size_t FabricEndpoint::drain_completions() {
  size_t total = 0;
  fi_cq_tagged_entry entries[32];
  while (true) {
    const ssize_t n = fi_cq_read(domain_->completions(), entries, 32);
    if (n == -FI_EAVAIL) {
      deliver_error();
      ++total;
      continue;
    }
    if (n <= 0) return total;
    for (ssize_t i = 0; i < n; ++i) ops_.done(static_cast<FabricOp*>(entries[i].op_context), entries[i].len, entries[i].tag);
    total += static_cast<size_t>(n);
    if (n < 32) return total;
  }
}

void FabricEndpoint::deliver_error() {
  fi_cq_err_entry err{};
  if (fi_cq_readerr(domain_->completions(), &err, 0) != 1) return;
  char buf[256] = {0};
  const char* text = fi_cq_strerror(domain_->completions(), err.prov_errno, err.err_data, buf, sizeof(buf));
  std::string why = fi_strerror(err.err);
  if (text && *text) why += std::string(" (") + text + ")";
  ops_.failed(static_cast<FabricOp*>(err.op_context), err.err == FI_ECANCELED, why);
}

void FabricEndpoint::idle_wait(bool retries_pending) {
  if (retries_pending) return;
  const int wait_fd = domain_->wait_fd();
  pollfd fds[2] = {{event_fd_, POLLIN, 0}, {wait_fd, POLLIN, 0}};
  int timeout_ms = static_cast<int>(kTickEvery.count());
  if (wait_fd >= 0) {
    // Sleeping on the wait object is only safe once fi_trywait says nothing
    // is pending. A lane may read the queue after it: the sleep then ends at
    // the next completion, the thread's wake-up or the tick.
    fid* cq_fid = &domain_->completions()->fid;
    std::lock_guard api(api_mu_);
    if (fi_trywait(domain_->fabric(), &cq_fid, 1) != FI_SUCCESS) return;
  } else {
    const auto now = Clock::now();
    if (idle_since_ == Clock::time_point::max()) idle_since_ = now;
    if (now - idle_since_ < kSpinBeforeNap) {
      sched_yield();
      return;
    }
    timeout_ms = 1;  // nap, then poll the provider again
  }
  const int rc = poll(fds, wait_fd >= 0 ? 2 : 1, timeout_ms);
  if (rc > 0 && (fds[0].revents & POLLIN)) {
    uint64_t drained;
    while (read(event_fd_, &drained, sizeof(drained)) > 0) {
    }
  }
}

std::string FabricEndpoint::describe() const {
  const std::string frames =
      needs_local_registration() ? "copied through registered staging (the provider needs local registration)"
                : "posted ones sent from the caller's memory when they have at most " + std::to_string(iov_limit()) +
                      " parts, the others copied (the provider needs no registration)";
  return "provider " + provider() + ", domain " + domain() + "; frames: " + frames + "; progress: one thread, " +
         (polls() ? "polling" : "sleeping on the completion queue's fd") + "; device memory: " +
         (offers_device_memory() ? "staged in host memory (the provider offers FI_HMEM; registering GPU memory directly is untested)"
                : "staged in host memory (the provider has no FI_HMEM)");
}

}  // namespace omnib
