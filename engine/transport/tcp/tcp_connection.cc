#include "engine/transport/tcp/tcp_connection.h"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>

namespace omnib {

using SteadyClock = std::chrono::steady_clock;

namespace {

constexpr size_t kHeaderBytes = sizeof(wire::FrameHeader);
constexpr size_t kSpillBytes = 64 << 10;
constexpr size_t kShortSpillBytes = 4 << 10;

}  // namespace

TcpConnection::TcpConnection(int fd, int peer_rank, uint32_t job_id, std::chrono::milliseconds timeout)
    : fd_(fd),
      peer_rank_(peer_rank),
      job_id_(job_id),
      timeout_(timeout),
      name_("tcp link to rank " + std::to_string(peer_rank)) {
  fcntl(fd_, F_SETFL, fcntl(fd_, F_GETFL) | O_NONBLOCK);
  // Edge-triggered: the loop is told when something changes, reads and
  // writes until the socket would block, and a consumer that frees inbox
  // room reads on by itself (no epoll_ctl per frame).
  Status s = IoLoop::instance().add(fd_, this, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET);
  std::lock_guard lock(mu_);
  registered_ = s.is_ok();
  if (!s.is_ok()) failure_ = s.with_context(name_ + ": ");
}

TcpConnection::~TcpConnection() {
  // After remove() returns the loop will not call on_ready again.
  if (registered_) IoLoop::instance().remove(fd_);
  close(fd_);
}

void TcpConnection::on_ready(uint32_t events) {
  std::lock_guard lock(mu_);
  if (!failure_.is_ok()) return;
  const size_t received_before = inbox_.size();
  const uint64_t done_before = done_;
  const uint64_t peer_read_before = peer_read_;
  const uint64_t peer_budget_before = peer_budget_;
  if (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) peer_hung_up_ = true;
  if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) read_available_locked();
  // A credit that arrived lets held frames go, and frames that arrived may
  // make one due: both write without the socket having said it has room.
  const bool credit_in = peer_read_ != peer_read_before || peer_budget_ != peer_budget_before;
  const bool credit_out = queue_credit_if_due_locked();
  if ((events & EPOLLOUT) || credit_in || credit_out) write_available_locked();
  notify_locked(inbox_.size() != received_before, done_ != done_before);
}

Status TcpConnection::state_error_locked() const {
  return failure_.is_ok() ? Status::ok() : failure_;
}

void TcpConnection::fail_locked(Status why) {
  if (!failure_.is_ok()) return;
  failure_ = why;
  notify_locked(true, true);
}

void TcpConnection::notify_locked(bool received, bool sent) {
  if (!received && !sent) return;
  changed_.notify_all();
  if (received && receive_waker_) receive_waker_->notify();
  if (sent && send_waker_) send_waker_->notify();
}

void TcpConnection::fail_send_locked(int err) {
  fail_locked(unavailable_error(name_ + ": send failed: " + std::strerror(err) + " (did the peer die?)"));
}

iovec TcpConnection::frame_room_locked() {
  if (have_ < kHeaderBytes) return {reinterpret_cast<char*>(&reading_.header) + have_, kHeaderBytes - have_};
  return {reading_.payload.data() + (have_ - kHeaderBytes), kHeaderBytes + reading_.header.length - have_};
}

void TcpConnection::read_available_locked() {
  bool empty = false;  // the last read came back short: nothing more is waiting
  while (failure_.is_ok() && inbox_.size() < read_limit_locked()) {
    const iovec room = frame_room_locked();
    size_t n = 0;
    if (spill_at_ < spill_end_) {
      n = std::min(room.iov_len, spill_end_ - spill_at_);
      std::memcpy(room.iov_base, spill_.data() + spill_at_, n);
      spill_at_ += n;
    } else {
      // A short read of a stream socket leaves it empty, and the loop is
      // told when more arrives (edge-triggered); after a hang-up only a read
      // of 0 bytes says the stream ended.
      if (empty && !peer_hung_up_) return;
      if (spill_.empty()) spill_.resize(kSpillBytes);
      // Behind a long payload, little: copying the next frame's start out
      // of the look-ahead would cost more than the read it saves.
      const size_t ahead = room.iov_len >= kSpillBytes ? kShortSpillBytes : kSpillBytes;
      iovec parts[2] = {room, {spill_.data(), ahead}};
      const ssize_t got = readv(fd_, parts, 2);
      if (got < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return;
        fail_locked(unavailable_error(name_ + ": receive failed: " + std::strerror(errno) + " (did the peer die?)"));
        return;
      }
      if (got == 0) {
        fail_locked(unavailable_error(name_ + ": the peer closed the connection (did it fail or exit?)"));
        return;
      }
      n = std::min(static_cast<size_t>(got), room.iov_len);
      spill_at_ = 0;
      spill_end_ = static_cast<size_t>(got) - n;
      empty = static_cast<size_t>(got) < room.iov_len + ahead;
    }
    if (!frame_bytes_in_locked(n)) return;
  }
}

bool TcpConnection::frame_bytes_in_locked(size_t n) {
  const size_t before = have_;
  have_ += n;
  if (before < kHeaderBytes && have_ == kHeaderBytes) {
    // Checked before a byte of payload is allocated or read.
    Status valid = validate_header(reading_.header, job_id_, peer_rank_);
    if (valid.is_ok() && reading_.header.type == static_cast<uint16_t>(wire::FrameType::kCredit) &&
        reading_.header.length != 0)
      valid = unavailable_error(name_ + ": a credit frame with " + std::to_string(reading_.header.length) +
                                " payload bytes, not none (a corrupt stream, or a peer of another build)");
    if (!valid.is_ok()) {
      fail_locked(valid);
      return false;
    }
    if (reading_.header.type == static_cast<uint16_t>(wire::FrameType::kCredit)) {
      // Flow control, not a frame of the collective: neither delivered nor counted.
      have_ = 0;
      Status took = take_credit_locked(reading_.header);
      if (!took.is_ok()) {
        fail_locked(took);
        return false;
      }
      return true;
    }
    if (reading_.payload.capacity() < reading_.header.length && !spare_payloads_.empty()) {
      reading_.payload = std::move(spare_payloads_.back());
      spare_payloads_.pop_back();
    }
    reading_.payload.resize(reading_.header.length);
  }
  if (have_ == kHeaderBytes + reading_.header.length && have_ >= kHeaderBytes) {
    bytes_arrived_ += have_;
    received_.fetch_add(have_, std::memory_order_relaxed);
    frames_received_.fetch_add(1, std::memory_order_relaxed);
    inbox_.push_back(std::move(reading_));
    reading_ = Frame{};
    if (!spare_payloads_.empty()) {
      reading_.payload = std::move(spare_payloads_.back());
      spare_payloads_.pop_back();
    }
    have_ = 0;
  }
  return true;
}

void TcpConnection::write_available_locked() {
  while (failure_.is_ok()) {
    if (credit_out_.pending && (outbox_.empty() || !outbox_.front().started)) {
      if (!write_credit_locked()) return;
      continue;
    }
    if (outbox_.empty()) return;
    Outgoing& o = outbox_.front();
    if (!o.started) {
      if (!credit_allows_locked(o)) return;  // the peer's next credit writes on
      o.started = true;
      bytes_started_ += wire::frame_bytes(o.header);
    }
    msghdr msg{};
    msg.msg_iov = o.iov.data() + o.next;
    msg.msg_iovlen = std::min<size_t>(o.iov.size() - o.next, IOV_MAX);
    const ssize_t w = sendmsg(fd_, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;  // the loop hears when there is room
      fail_send_locked(errno);
      return;
    }
    sent_.fetch_add(static_cast<uint64_t>(w), std::memory_order_relaxed);
    auto left = static_cast<size_t>(w);
    while (o.next < o.iov.size() && left >= o.iov[o.next].iov_len) left -= o.iov[o.next++].iov_len;
    if (o.next < o.iov.size()) {
      o.iov[o.next].iov_base = static_cast<char*>(o.iov[o.next].iov_base) + left;
      o.iov[o.next].iov_len -= left;
      continue;
    }
    done_ = o.ticket;
    frames_sent_.fetch_add(1, std::memory_order_relaxed);
    outbox_.pop_front();
  }
}

Result<std::optional<uint64_t>> TcpConnection::post(wire::FrameType type, uint32_t tag, uint64_t seq,
                                                    std::span<const iovec> parts) {
  std::lock_guard lock(mu_);
  if (!failure_.is_ok()) return failure_;
  if (posted_ - done_ >= send_window_) return std::optional<uint64_t>();
  uint64_t length = 0;
  for (const auto& p : parts) length += p.iov_len;
  outbox_.push_back(Outgoing{make_header(type, job_id_, tag, seq, length), {}, 0, ++posted_});
  Outgoing& o = outbox_.back();
  o.iov.reserve(parts.size() + 1);
  o.iov.push_back({&o.header, kHeaderBytes});
  for (const auto& p : parts)
    if (p.iov_len) o.iov.push_back(p);
  const uint64_t ticket = o.ticket;
  // Alone in the queue: write now, on this thread; the loop finishes it.
  if (outbox_.size() == 1) {
    const uint64_t before = done_;
    write_available_locked();
    if (done_ != before) changed_.notify_all();
  }
  if (!failure_.is_ok()) return failure_;
  return std::optional<uint64_t>(ticket);
}

uint64_t TcpConnection::sends_done() const {
  std::lock_guard lock(mu_);
  return done_;
}

Status TcpConnection::send(wire::FrameType type, uint32_t tag, uint64_t seq, std::span<const iovec> parts) {
  // One deadline for the whole send: waiting for window room and writing.
  const auto deadline = SteadyClock::now() + timeout_;
  uint64_t ticket = 0;
  while (true) {
    auto posted = post(type, tag, seq, parts);
    if (!posted.is_ok()) return posted.status();
    if (posted.value()) {
      ticket = *posted.value();
      break;
    }
    std::unique_lock lock(mu_);
    if (!changed_.wait_until(lock, deadline, [&] { return !failure_.is_ok() || posted_ - done_ < send_window_; }))
      return timeout_error(name_ + ": send made no progress within the timeout (is the peer stuck?)");
  }
  std::unique_lock lock(mu_);
  if (!changed_.wait_until(lock, deadline, [&] { return !failure_.is_ok() || done_ >= ticket; }))
    return timeout_error(name_ + ": send did not finish within the timeout (is the peer stuck?)");
  return done_ >= ticket ? Status::ok() : failure_;
}

Result<bool> TcpConnection::try_recv(Frame& frame) {
  std::lock_guard lock(mu_);
  if (inbox_.empty()) {
    if (!failure_.is_ok()) return failure_;
    return false;
  }
  const bool was_full = inbox_.size() >= read_limit_locked();
  bytes_taken_ += wire::frame_bytes(inbox_.front().header);
  std::swap(frame, inbox_.front());
  // The caller's old payload buffer serves a later frame.
  if (spare_payloads_.size() < recv_window_) spare_payloads_.push_back(std::move(inbox_.front().payload));
  inbox_.pop_front();
  // The loop stopped reading at a full inbox and hears of no new data until
  // more arrives: read on from here.
  if (was_full) {
    const size_t before = inbox_.size();
    read_available_locked();
    if (inbox_.size() != before && receive_waker_) receive_waker_->notify();
  }
  if (queue_credit_if_due_locked()) {
    const uint64_t done_before = done_;
    write_available_locked();
    notify_locked(false, done_ != done_before);
  }
  return true;
}

Status TcpConnection::recv(Frame& frame) {
  const auto deadline = SteadyClock::now() + timeout_;
  while (true) {
    auto got = try_recv(frame);
    if (!got.is_ok()) return got.status();
    if (got.value()) return validate_header(frame.header, job_id_, peer_rank_);
    std::unique_lock lock(mu_);
    if (!changed_.wait_until(lock, deadline, [&] { return !failure_.is_ok() || !inbox_.empty(); })) {
      if (have_ == 0)
        return timeout_error(name_ + ": nothing received within the timeout (is the peer stuck? raise -T if it "
                             "is only slow)");
      return timeout_error(name_ + ": a frame did not arrive whole within the timeout (" + std::to_string(have_) +
                           " bytes arrived; is the peer stuck? raise -T if it is only slow)");
    }
  }
}

Status TcpConnection::health() const {
  std::lock_guard lock(mu_);
  return failure_;
}

void TcpConnection::set_wakers(Waker* on_receive, Waker* on_send) {
  std::lock_guard lock(mu_);
  receive_waker_ = on_receive;
  send_waker_ = on_send;
}

void TcpConnection::set_windows(size_t recv_frames, size_t send_frames, size_t inflight_bytes) {
  std::lock_guard lock(mu_);
  recv_window_ = std::max<size_t>(1, recv_frames);
  send_window_ = std::max<size_t>(1, send_frames);
  // The budget travels as credits, not as a smaller socket receive buffer:
  // a buffer shrunk to a few KiB held less than the window TCP had promised
  // (the kernel counts each packet's overhead, which small frames make
  // large), the excess was dropped, and a lost tail waited out a 200 ms
  // retransmission timeout.
  budget_ = std::min<uint64_t>(inflight_bytes, UINT32_MAX);  // a credit carries it in 32 bits
  // A wider window or a budget reads on, and the socket may say nothing
  // new about bytes already waiting in it.
  const size_t received_before = inbox_.size();
  read_available_locked();
  if (queue_credit_if_due_locked()) write_available_locked();
  // A wider send window lets a waiting sender on.
  notify_locked(inbox_.size() != received_before, true);
}

size_t TcpConnection::recv_window() const {
  std::lock_guard lock(mu_);
  return recv_window_;
}

size_t TcpConnection::send_window() const {
  std::lock_guard lock(mu_);
  return send_window_;
}

void TcpConnection::abort() {
  std::lock_guard lock(mu_);
  if (aborted_) return;
  aborted_ = true;
  shutdown(fd_, SHUT_RDWR);
  fail_locked(unavailable_error(name_ + ": connection was aborted"));
}

}  // namespace omnib
