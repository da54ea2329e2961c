#include "engine/transport/tcp/tcp_frame_writer.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <string>

namespace omnib {
namespace {

constexpr size_t kHeaderBytes = sizeof(wire::FrameHeader);

}  // namespace

bool TcpFrameWriter::queue_locked(const wire::FrameHeader& header, std::span<const iovec> parts, uint64_t ticket) {
  outbox_.push_back(Outgoing{header, {}, 0, ticket});
  Outgoing& o = outbox_.back();
  o.iov.reserve(parts.size() + 1);
  o.iov.push_back({&o.header, kHeaderBytes});
  for (const auto& p : parts)
    if (p.iov_len) o.iov.push_back(p);
  return outbox_.size() == 1;
}

bool TcpFrameWriter::queue_credit_locked(const wire::FrameHeader& credit) {
  if (credit_.written > 0) return false;
  credit_.header = credit;
  credit_.pending = true;
  return true;
}

void TcpFrameWriter::write_available_locked() {
  while (!core_.failed_locked()) {
    if (credit_.pending && (outbox_.empty() || !outbox_.front().started)) {
      if (!write_credit()) return;
      continue;
    }
    if (outbox_.empty() || !write_front()) return;
  }
}

bool TcpFrameWriter::write_front() {
  Outgoing& o = outbox_.front();
  if (!o.started) {
    SendBudget& budget = core_.send_budget_locked();
    if (!budget.allows(wire::frame_bytes(o.header))) return false;  // the peer's next credit writes on
    o.started = true;
    budget.start(wire::frame_bytes(o.header));
  }
  msghdr msg{};
  msg.msg_iov = o.iov.data() + o.next;
  msg.msg_iovlen = std::min<size_t>(o.iov.size() - o.next, IOV_MAX);
  const ssize_t w = sendmsg(fd_, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
  if (w < 0) {
    if (errno == EINTR) return true;
    if (errno != EAGAIN && errno != EWOULDBLOCK) fail_send(errno);
    return false;  // the loop hears when there is room
  }
  core_.count_sent(static_cast<uint64_t>(w), 0);
  auto left = static_cast<size_t>(w);
  while (o.next < o.iov.size() && left >= o.iov[o.next].iov_len) left -= o.iov[o.next++].iov_len;
  if (o.next < o.iov.size()) {
    o.iov[o.next].iov_base = static_cast<char*>(o.iov[o.next].iov_base) + left;
    o.iov[o.next].iov_len -= left;
    return true;
  }
  core_.sends_finished_locked(o.ticket);
  core_.count_sent(0, 1);
  outbox_.pop_front();
  return true;
}

bool TcpFrameWriter::write_credit() {
  while (credit_.written < kHeaderBytes) {
    const ssize_t w = ::send(fd_, reinterpret_cast<const char*>(&credit_.header) + credit_.written,
                             kHeaderBytes - credit_.written, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) fail_send(errno);
      return false;
    }
    credit_.written += static_cast<size_t>(w);
  }
  credit_.written = 0;
  credit_.pending = false;
  // The reader may have taken more while it was being written.
  credits_.credit_written_locked();
  return true;
}

void TcpFrameWriter::fail_send(int err) {
  core_.fail_locked(unavailable_error(core_.name() + ": send failed: " + std::strerror(err) + " (did the peer die?)"));
}

}  // namespace omnib
