#include "engine/transport/fabric/fabric_address_book.h"

#include "engine/transport/fabric/fabric_endpoint.h"

namespace omnib {

Result<fi_addr_t> FabricAddressBook::hold(const std::string& address, bool of_the_job) {
  auto it = known_.find(address);
  if (it == known_.end()) {
    auto addr = ep_.insert_address(address);
    if (!addr.is_ok()) return addr.status();
    it = known_.emplace(address, Known{addr.value()}).first;
  }
  ++it->second.refs;
  it->second.of_the_job |= of_the_job;
  return it->second.addr;
}

void FabricAddressBook::release(const std::string& address) {
  auto it = known_.find(address);
  if (it == known_.end() || --it->second.refs > 0 || it->second.of_the_job) return;
  ep_.remove_address(it->second.addr);
  known_.erase(it);
}

void FabricAddressBook::keep(const std::string& address) { known_.at(address).of_the_job = true; }

void FabricAddressBook::hold_again(const std::string& address) { known_.at(address).refs++; }

}  // namespace omnib
