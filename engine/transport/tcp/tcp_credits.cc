// TcpConnection's credits (docs/wire-format.md, "Credits on TCP links"):
// what the receiver reports and when, and what the sender may start.
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>

#include "engine/transport/tcp/tcp_connection.h"

namespace omnib {
namespace {

constexpr size_t kHeaderBytes = sizeof(wire::FrameHeader);

}  // namespace

uint64_t TcpConnection::bytes_read_locked() const {
  uint64_t read = bytes_taken_;
  const size_t held = std::min(inbox_.size(), recv_window_);
  for (size_t i = 0; i < held; ++i) read += wire::frame_bytes(inbox_[i].header);
  return read;
}

size_t TcpConnection::read_limit_locked() const {
  // With a budget the sender's credits bound what arrives, and the loop
  // reads on: a credit for this end's own sends may follow the frames (a
  // loop that stopped at a full inbox held it up, and two ranks each
  // waiting for the other's frames stalled).
  return budget_ == 0 ? recv_window_ : SIZE_MAX;
}

// Credits go out when a quarter of the budget was read since the last, or
// when the reader took something and more than a quarter of the budget
// arrived since the last credit with no frame half read (the sender may be
// held back: it goes past the budget only with at most a quarter unread).
bool TcpConnection::credit_due_locked() const {
  if (budget_ != advertised_budget_) return true;
  if (budget_ == 0) return false;  // links without a budget skip the count
  const uint64_t read = bytes_read_locked();
  if (read <= advertised_read_) return false;
  const uint64_t quarter = budget_ / 4;
  return read - advertised_read_ >= quarter || (have_ == 0 && bytes_arrived_ - advertised_read_ > quarter);
}

bool TcpConnection::queue_credit_if_due_locked() {
  // A credit half written goes out as it is; the next one follows it.
  if (credit_out_.written > 0 || !failure_.is_ok() || !credit_due_locked()) return false;
  advertised_read_ = bytes_read_locked();
  advertised_budget_ = budget_;
  credit_out_.header = make_header(wire::FrameType::kCredit, job_id_, static_cast<uint32_t>(advertised_budget_),
                                   advertised_read_, 0);
  credit_out_.pending = true;
  return true;
}

bool TcpConnection::credit_allows_locked(const Outgoing& o) const {
  if (peer_budget_ == 0) return true;
  // Beyond the budget only when at most a quarter of it is unread, so a
  // frame larger than what is left still goes.
  return bytes_started_ + wire::frame_bytes(o.header) <= peer_read_ + peer_budget_ ||
         bytes_started_ <= peer_read_ + peer_budget_ / 4;
}

Status TcpConnection::take_credit_locked(const wire::FrameHeader& credit) {
  const uint64_t bytes_read = credit.seq;
  if (bytes_read > bytes_started_)
    return unavailable_error(name_ + ": a credit for " + std::to_string(bytes_read) + " bytes read, but only " +
                             std::to_string(bytes_started_) + " were sent (a corrupt stream?)");
  peer_read_ = std::max(peer_read_, bytes_read);
  peer_budget_ = credit.tag;
  return Status::ok();
}

bool TcpConnection::write_credit_locked() {
  CreditFrame& c = credit_out_;
  while (c.written < kHeaderBytes) {
    const ssize_t w = ::send(fd_, reinterpret_cast<const char*>(&c.header) + c.written, kHeaderBytes - c.written,
                             MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return false;
      fail_send_locked(errno);
      return false;
    }
    c.written += static_cast<size_t>(w);
  }
  c.written = 0;
  c.pending = false;
  // The reader may have taken more while it was being written.
  queue_credit_if_due_locked();
  return true;
}

}  // namespace omnib
