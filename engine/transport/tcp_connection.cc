#include "engine/transport/tcp_connection.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <vector>


namespace omnib {

TcpConnection::TcpConnection(int fd, int peer_rank, uint32_t job_id, std::chrono::milliseconds timeout)
    : fd_(fd),
      peer_rank_(peer_rank),
      job_id_(job_id),
      timeout_(timeout),
      name_("tcp link to rank " + std::to_string(peer_rank)) {}

TcpConnection::~TcpConnection() { close(fd_); }

void TcpConnection::set_peer_rank(int rank) {
  peer_rank_ = rank;
  name_ = "tcp link to rank " + std::to_string(rank);
}

void TcpConnection::abort() {
  if (!aborted_.exchange(true)) shutdown(fd_, SHUT_RDWR);
}

Status TcpConnection::send_iovecs(iovec* iov, size_t count, SteadyClock::time_point deadline) {
  while (count > 0) {
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = std::min<size_t>(count, IOV_MAX);
    ssize_t w = sendmsg(fd_, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK)
        return unavailable_error(name_ + ": send failed: " + std::strerror(errno));
      if (aborted_) return unavailable_error(name_ + ": connection was aborted");
      Status ready = wait_ready(fd_, POLLOUT, deadline, name_);
      if (ready.code() == Code::kTimeout)
        return timeout_error(name_ + ": send did not finish within the timeout (is the peer stuck?)");
      OMNIB_RETURN_IF_ERROR(ready);
      continue;
    }
    sent_.fetch_add(static_cast<uint64_t>(w), std::memory_order_relaxed);
    auto done = static_cast<size_t>(w);
    while (count > 0 && done >= iov->iov_len) {
      done -= iov->iov_len;
      ++iov;
      --count;
    }
    if (count > 0) {
      iov->iov_base = static_cast<char*>(iov->iov_base) + done;
      iov->iov_len -= done;
    }
  }
  return Status::ok();
}

Status TcpConnection::send(wire::FrameType type, uint32_t tag, uint64_t seq, std::span<const iovec> parts) {
  if (aborted_) return unavailable_error(name_ + ": connection was aborted");
  uint64_t length = 0;
  for (const auto& p : parts) length += p.iov_len;
  wire::FrameHeader header = make_header(type, job_id_, tag, seq, length);
  // A small stack array covers the common case; large gathers go to the heap.
  constexpr size_t kInline = 64;
  iovec inline_iov[kInline];
  std::vector<iovec> heap_iov;
  iovec* iov = inline_iov;
  if (parts.size() + 1 > kInline) {
    heap_iov.resize(parts.size() + 1);
    iov = heap_iov.data();
  }
  iov[0] = {&header, sizeof(header)};
  size_t n = 1;
  for (const auto& p : parts)
    if (p.iov_len) iov[n++] = p;
  return send_iovecs(iov, n, deadline_after(timeout_));
}

Status TcpConnection::recv(Frame& frame) {
  if (aborted_) return unavailable_error(name_ + ": connection was aborted");
  // One deadline for the whole frame: header and payload.
  const auto deadline = deadline_after(timeout_);
  Status got = read_all(fd_, &frame.header, sizeof(frame.header), deadline, name_);
  if (!got.is_ok()) return aborted_ ? unavailable_error(name_ + ": connection was aborted") : got;
  OMNIB_RETURN_IF_ERROR(validate_header(frame.header, job_id_, peer_rank_));
  frame.payload.resize(frame.header.length);
  if (frame.header.length) got = read_all(fd_, frame.payload.data(), frame.header.length, deadline, name_);
  if (!got.is_ok()) return aborted_ ? unavailable_error(name_ + ": connection was aborted") : got;
  received_.fetch_add(sizeof(frame.header) + frame.header.length, std::memory_order_relaxed);
  return Status::ok();
}

}  // namespace omnib
