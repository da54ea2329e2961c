#include "tools/net/qdisc_counter.h"

#include <linux/gen_stats.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

namespace omnib {
namespace {

// The basic byte count inside one RTM_NEWQDISC message's attributes.
std::optional<uint64_t> bytes_of(const rtattr* attr, int len) {
  std::optional<uint64_t> legacy;
  for (; RTA_OK(attr, len); attr = RTA_NEXT(attr, len)) {
    if (attr->rta_type == TCA_STATS2) {
      const rtattr* inner = static_cast<const rtattr*>(RTA_DATA(attr));
      int inner_len = static_cast<int>(RTA_PAYLOAD(attr));
      for (; RTA_OK(inner, inner_len); inner = RTA_NEXT(inner, inner_len)) {
        if (inner->rta_type == TCA_STATS_BASIC && RTA_PAYLOAD(inner) >= sizeof(uint64_t)) {
          uint64_t bytes;
          std::memcpy(&bytes, RTA_DATA(inner), sizeof(bytes));
          return bytes;
        }
      }
    } else if (attr->rta_type == TCA_STATS && RTA_PAYLOAD(attr) >= sizeof(uint64_t)) {
      uint64_t bytes;
      std::memcpy(&bytes, RTA_DATA(attr), sizeof(bytes));
      legacy = bytes;
    }
  }
  return legacy;
}

}  // namespace

Result<std::unique_ptr<QdiscCounter>> QdiscCounter::open(const std::string& device) {
  const unsigned ifindex = if_nametoindex(device.c_str());
  if (ifindex == 0)
    return unavailable_error("no interface '" + device + "' in this network namespace (" + std::strerror(errno) +
                             ")");
  int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0) return unavailable_error(std::string("rtnetlink socket: ") + std::strerror(errno));
  timeval wait{2, 0};  // the kernel answers at once; never hang a rank on it
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
  return std::unique_ptr<QdiscCounter>(new QdiscCounter(device, static_cast<int>(ifindex), fd));
}

QdiscCounter::~QdiscCounter() { close(fd_); }

Result<uint64_t> QdiscCounter::sent_bytes() {
  struct {
    nlmsghdr nh;
    tcmsg tc;
  } req{};
  req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(tcmsg));
  req.nh.nlmsg_type = RTM_GETQDISC;
  req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  req.nh.nlmsg_seq = ++seq_;
  req.tc.tcm_family = AF_UNSPEC;
  req.tc.tcm_ifindex = ifindex_;
  if (send(fd_, &req, req.nh.nlmsg_len, 0) < 0)
    return unavailable_error("asking for the qdisc counters of " + device_ + ": " + std::strerror(errno));
  // A dump may list every qdisc of the namespace (a rank's holds two
  // interfaces); keep ours: the root qdisc of our interface.
  std::optional<uint64_t> found;
  std::vector<char> buf(64 * 1024);
  while (true) {
    ssize_t n = recv(fd_, buf.data(), buf.size(), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return unavailable_error("reading the qdisc counters of " + device_ + ": " + std::strerror(errno));
    int left = static_cast<int>(n);
    for (auto* nh = reinterpret_cast<nlmsghdr*>(buf.data()); NLMSG_OK(nh, left); nh = NLMSG_NEXT(nh, left)) {
      if (nh->nlmsg_seq != seq_) continue;
      if (nh->nlmsg_type == NLMSG_DONE) {
        if (!found) return unavailable_error("no qdisc on " + device_ + ": is the emulated link shaped?");
        return *found;
      }
      if (nh->nlmsg_type == NLMSG_ERROR) {
        const auto* e = static_cast<const nlmsgerr*>(NLMSG_DATA(nh));
        return unavailable_error("qdisc counters of " + device_ + ": " + std::strerror(-e->error));
      }
      if (nh->nlmsg_type != RTM_NEWQDISC) continue;
      const auto* tc = static_cast<const tcmsg*>(NLMSG_DATA(nh));
      if (tc->tcm_ifindex != ifindex_ || tc->tcm_parent != TC_H_ROOT) continue;
      const int attr_len = static_cast<int>(nh->nlmsg_len) - static_cast<int>(NLMSG_LENGTH(sizeof(tcmsg)));
      const auto* attr = reinterpret_cast<const rtattr*>(reinterpret_cast<const char*>(tc) + NLMSG_ALIGN(sizeof(tcmsg)));
      if (auto bytes = bytes_of(attr, attr_len)) found = bytes;
    }
  }
}

}  // namespace omnib
