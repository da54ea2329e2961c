// The libfabric objects behind one rank's endpoint, opened from
// fi_getinfo's answer for a provider (fabric_provider.h): the fabric, the
// domain, an address vector, one completion queue (with the provider's wait
// object where it has one) and one reliable-datagram endpoint; what the
// provider said about itself; and the memory registered with the domain.
//
// Threads: not thread-safe. The domain runs FI_THREAD_DOMAIN, so whoever
// owns it (FabricEndpoint) makes every call on it one at a time.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include <memory>
#include <string>
#include <unordered_set>

#include "engine/base/status.h"

namespace omnib {

class FabricDomain {
 public:
  // Opens `provider` (find_fabric's names; empty: the first offered) with
  // its source address on `bind_host`.
  static Result<std::unique_ptr<FabricDomain>> open(const std::string& provider, const std::string& bind_host);
  ~FabricDomain() { close(); }
  FabricDomain(const FabricDomain&) = delete;
  FabricDomain& operator=(const FabricDomain&) = delete;

  // Closes everything (the endpoint first, which ends every operation
  // still out). Later calls are no-ops.
  void close();
  bool closed() const { return ep_ == nullptr; }

  fid_ep* endpoint() const { return ep_; }
  fid_cq* completions() const { return cq_; }
  fid_fabric* fabric() const { return fabric_; }
  // The completion queue's wait object; -1: the provider must be polled.
  int wait_fd() const { return wait_fd_; }

  // This endpoint's address as libfabric names it (raw bytes).
  const std::string& address() const { return address_; }
  const std::string& provider() const { return provider_; }
  const std::string& domain_name() const { return domain_name_; }
  bool needs_local_registration() const { return mr_local_; }
  void force_local_registration() { mr_local_ = true; }
  size_t max_message_bytes() const { return max_message_; }
  size_t iov_limit() const { return iov_limit_; }
  bool offers_device_memory() const { return hmem_; }

  Result<fi_addr_t> insert_address(const std::string& raw);
  void remove_address(fi_addr_t addr);
  // Registers [data, data + bytes) for sends and receives, or nullptr
  // when the provider needs no registration.
  Result<fid_mr*> register_memory(void* data, size_t bytes);
  void release_memory(fid_mr* mr);

  static std::string error_text(ssize_t rc);

 private:
  FabricDomain() = default;
  Status open_from(fi_info* info);
  // Opens the completion queue, with a wait object when the provider has one.
  Status open_completions(const std::string& where);
  // Opens, binds and enables the endpoint, and reads its address.
  Status open_endpoint(fi_info* info, const std::string& where);

  fid_fabric* fabric_ = nullptr;
  fid_domain* domain_ = nullptr;
  fid_av* av_ = nullptr;
  fid_cq* cq_ = nullptr;
  fid_ep* ep_ = nullptr;
  int wait_fd_ = -1;
  std::string address_, provider_, domain_name_;
  bool mr_local_ = false;
  bool hmem_ = false;
  size_t max_message_ = 0;
  size_t iov_limit_ = 1;
  std::unordered_set<fid_mr*> registrations_;
  uint64_t next_key_ = 0;
};

}  // namespace omnib
