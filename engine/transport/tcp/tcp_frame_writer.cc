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
      if (!(credit_.written == 0 && front_may_start() ? write_credit_and_front() : write_credit())) return;
      continue;
    }
    if (outbox_.empty() || !write_front()) return;
  }
}

bool TcpFrameWriter::front_may_start() const {
  return !outbox_.empty() && core_.send_budget_locked().allows(wire::frame_bytes(outbox_.front().header));
}

void TcpFrameWriter::start_front() {
  Outgoing& o = outbox_.front();
  o.started = true;
  core_.send_budget_locked().start(wire::frame_bytes(o.header));
}

bool TcpFrameWriter::write_front() {
  Outgoing& o = outbox_.front();
  if (!o.started) {
    if (!front_may_start()) return false;  // the peer's next credit writes on
    start_front();
  }
  msghdr msg{};
  msg.msg_iov = o.iov.data() + o.next;
  msg.msg_iovlen = std::min<size_t>(o.iov.size() - o.next, IOV_MAX);
  const ssize_t w = sendmsg(fd_, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
  if (w < 0) return write_failed();
  front_written(static_cast<size_t>(w));
  return true;
}

bool TcpFrameWriter::write_credit_and_front() {
  // One system call, and at the receiver one read, for both: a credit's
  // header alone is a packet, an acknowledgement and a wake-up of the
  // peer's network thread, and on a link that streams both ways (omni's
  // blocks one way, their results the other) most credits have a frame
  // to ride with.
  Outgoing& o = outbox_.front();
  iovec iov[IOV_MAX];
  iov[0] = {&credit_.header, kHeaderBytes};
  const size_t frame_parts = std::min<size_t>(o.iov.size(), IOV_MAX - 1);
  std::copy_n(o.iov.begin(), frame_parts, iov + 1);
  msghdr msg{};
  msg.msg_iov = iov;
  msg.msg_iovlen = frame_parts + 1;
  const ssize_t w = sendmsg(fd_, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
  if (w < 0) return write_failed();
  const auto written = static_cast<size_t>(w);
  credit_.written = std::min(written, kHeaderBytes);
  if (credit_.written < kHeaderBytes) return false;  // the socket is full: the credit's rest goes first
  credit_written();
  ++credits_with_frames_;
  start_front();
  front_written(written - kHeaderBytes);
  return true;
}

void TcpFrameWriter::front_written(size_t bytes) {
  Outgoing& o = outbox_.front();
  core_.count_sent(bytes, 0);
  size_t left = bytes;
  while (o.next < o.iov.size() && left >= o.iov[o.next].iov_len) left -= o.iov[o.next++].iov_len;
  if (o.next < o.iov.size()) {
    o.iov[o.next].iov_base = static_cast<char*>(o.iov[o.next].iov_base) + left;
    o.iov[o.next].iov_len -= left;
    return;
  }
  core_.sends_finished_locked(o.ticket);
  core_.count_sent(0, 1);
  outbox_.pop_front();
}

bool TcpFrameWriter::write_failed() {
  if (errno == EINTR) return true;
  if (errno != EAGAIN && errno != EWOULDBLOCK) fail_send(errno);
  return false;  // the loop hears when there is room
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
  credit_written();
  return true;
}

void TcpFrameWriter::credit_written() {
  credit_.written = 0;
  credit_.pending = false;
  // The reader may have taken more while it was being written.
  credits_.credit_written_locked();
}

void TcpFrameWriter::fail_send(int err) {
  core_.fail_locked(unavailable_error(core_.name() + ": send failed: " + std::strerror(err) + " (did the peer die?)"));
}

}  // namespace omnib
