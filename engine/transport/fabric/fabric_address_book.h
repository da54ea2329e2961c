// The peer addresses a rank's fabric endpoint has in its address table,
// counted by their users: a stranger's knock holds its address only while
// its hello is awaited, a rank of the job keeps its address for good.
//
// Threads: the endpoint's progress thread only.
#pragma once

#include <rdma/fabric.h>

#include <map>
#include <string>

#include "engine/base/status.h"

namespace omnib {

class FabricEndpoint;

class FabricAddressBook {
 public:
  explicit FabricAddressBook(FabricEndpoint& endpoint) : ep_(endpoint) {}

  // The table's name for `address` (inserted on first use), held once more.
  Result<fi_addr_t> hold(const std::string& address, bool of_the_job);
  // One holder fewer; the address leaves the table with its last (unless
  // it is a rank's).
  void release(const std::string& address);
  // Marks `address` (held) as a rank's.
  void keep(const std::string& address);
  // One more holder of an address already held.
  void hold_again(const std::string& address);

 private:
  struct Known {
    fi_addr_t addr;
    int refs = 0;
    bool of_the_job = false;  // a rank's: kept for good
  };
  FabricEndpoint& ep_;
  std::map<std::string, Known> known_;
};

}  // namespace omnib
