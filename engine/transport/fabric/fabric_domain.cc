#include "engine/transport/fabric/fabric_domain.h"

#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include <algorithm>

#include "engine/transport/fabric/fabric_provider.h"
#include "engine/transport/frame_format.h"

namespace omnib {
namespace {

// Completion queue entries: room for every receive a rank of a large job
// keeps posted, so that the provider never has to hold completions back.
constexpr size_t kCompletionQueueEntries = 16384;

Status fabric_error(const std::string& what, int rc) {
  return unavailable_error("libfabric " + what + ": " + fi_strerror(rc < 0 ? -rc : rc));
}

bool provider_offers_hmem(const std::string& provider) {
  auto with_hmem = find_fabric(provider, "");
  if (!with_hmem.is_ok()) return false;
  return (with_hmem.value()->caps & FI_HMEM) != 0;
}

}  // namespace

Result<std::unique_ptr<FabricDomain>> FabricDomain::open(const std::string& provider, const std::string& bind_host) {
  auto found = find_fabric(provider, bind_host);
  if (!found.is_ok()) return found.status();
  std::unique_ptr<FabricDomain> d(new FabricDomain());
  OMNIB_RETURN_IF_ERROR(d->open_from(found.value().get()));
  return d;
}

Status FabricDomain::open_from(fi_info* info) {
  provider_ = info->fabric_attr->prov_name;
  domain_name_ = info->domain_attr->name ? info->domain_attr->name : "";
  mr_local_ = (info->domain_attr->mr_mode & FI_MR_LOCAL) != 0;
  // Capped at the largest frame payload: no part of a frame is longer.
  max_message_ = std::min<size_t>(info->ep_attr->max_msg_size, wire::kMaxPayload);
  iov_limit_ = std::max<size_t>(1, info->tx_attr->iov_limit);
  hmem_ = provider_offers_hmem(provider_);
  const std::string where = "provider " + provider_ + " (domain " + domain_name_ + ")";
  int rc = fi_fabric(info->fabric_attr, &fabric_, nullptr);
  if (rc) return fabric_error("fi_fabric for " + where, rc);
  rc = fi_domain(fabric_, info, &domain_, nullptr);
  if (rc) return fabric_error("fi_domain for " + where, rc);
  OMNIB_RETURN_IF_ERROR(open_completions(where));
  fi_av_attr av_attr{};
  av_attr.type = FI_AV_UNSPEC;
  rc = fi_av_open(domain_, &av_attr, &av_, nullptr);
  if (rc) return fabric_error("fi_av_open for " + where, rc);
  return open_endpoint(info, where);
}

Status FabricDomain::open_completions(const std::string& where) {
  fi_cq_attr cq_attr{};
  cq_attr.format = FI_CQ_FORMAT_TAGGED;
  cq_attr.size = kCompletionQueueEntries;
  cq_attr.wait_obj = FI_WAIT_FD;
  int rc = fi_cq_open(domain_, &cq_attr, &cq_, nullptr);
  if (rc == 0 && fi_control(&cq_->fid, FI_GETWAIT, &wait_fd_) != 0) {
    fi_close(&cq_->fid);
    cq_ = nullptr;
    rc = -FI_ENOSYS;
  }
  if (rc == 0) return Status::ok();
  // No wait object (efa, shm): the queue must be polled.
  wait_fd_ = -1;
  cq_attr.wait_obj = FI_WAIT_NONE;
  rc = fi_cq_open(domain_, &cq_attr, &cq_, nullptr);
  if (rc) return fabric_error("fi_cq_open for " + where, rc);
  return Status::ok();
}

Status FabricDomain::open_endpoint(fi_info* info, const std::string& where) {
  int rc = fi_endpoint(domain_, info, &ep_, nullptr);
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
  return Status::ok();
}

void FabricDomain::close() {
  // Closing the endpoint first ends every operation still out.
  if (ep_) fi_close(&ep_->fid);
  ep_ = nullptr;
  for (fid_mr* mr : registrations_) fi_close(&mr->fid);
  registrations_.clear();
  if (av_) fi_close(&av_->fid);
  if (cq_) fi_close(&cq_->fid);
  if (domain_) fi_close(&domain_->fid);
  if (fabric_) fi_close(&fabric_->fid);
  av_ = nullptr;
  cq_ = nullptr;
  domain_ = nullptr;
  fabric_ = nullptr;
}

Result<fi_addr_t> FabricDomain::insert_address(const std::string& raw) {
  if (closed()) return unavailable_error("the fabric endpoint is closed");
  fi_addr_t addr = FI_ADDR_UNSPEC;
  if (fi_av_insert(av_, raw.data(), 1, &addr, 0, nullptr) != 1)
    return unavailable_error("libfabric could not add a peer address to provider " + provider_ + "'s table");
  return addr;
}

void FabricDomain::remove_address(fi_addr_t addr) {
  if (!closed()) fi_av_remove(av_, &addr, 1, 0);
}

Result<fid_mr*> FabricDomain::register_memory(void* data, size_t bytes) {
  if (!mr_local_) return static_cast<fid_mr*>(nullptr);
  if (closed()) return unavailable_error("the fabric endpoint is closed");
  fid_mr* mr = nullptr;
  // Keys matter only for remote access (which we never give), but providers
  // that choose no keys themselves want them unique.
  const int rc = fi_mr_reg(domain_, data, bytes, FI_SEND | FI_RECV, 0, ++next_key_, 0, &mr, nullptr);
  if (rc) return fabric_error("could not register " + std::to_string(bytes) + " bytes with provider " + provider_ +
                              " (raise the locked-memory limit, ulimit -l)", rc);
  registrations_.insert(mr);
  return mr;
}

void FabricDomain::release_memory(fid_mr* mr) {
  if (!closed() && registrations_.erase(mr)) fi_close(&mr->fid);
}

std::string FabricDomain::error_text(ssize_t rc) { return fi_strerror(static_cast<int>(rc < 0 ? -rc : rc)); }

}  // namespace omnib
