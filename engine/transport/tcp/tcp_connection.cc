#include "engine/transport/tcp/tcp_connection.h"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>

#include "engine/transport/transport_cpu.h"

namespace omnib {

TcpConnection::TcpConnection(int fd, int peer_rank, uint32_t job_id, std::chrono::milliseconds timeout)
    : fd_(fd),
      core_(*this, "tcp link to rank " + std::to_string(peer_rank), peer_rank, job_id, timeout),
      reader_(fd, core_, *this),
      writer_(fd, core_, *this) {
  fcntl(fd_, F_SETFL, fcntl(fd_, F_GETFL) | O_NONBLOCK);
  // Edge-triggered: the loop is told when something changes, reads and
  // writes until the socket would block, and a consumer that frees inbox
  // room reads on by itself (no epoll_ctl per frame).
  Status s = IoLoop::instance().add(fd_, this, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET);
  std::lock_guard lock(core_.mu());
  registered_ = s.is_ok();
  if (!s.is_ok()) core_.fail_locked(s.with_context(core_.name() + ": "));
}

TcpConnection::~TcpConnection() {
  // After remove() returns the loop will not call on_ready again.
  if (registered_) IoLoop::instance().remove(fd_);
  close(fd_);
}

void TcpConnection::on_ready(uint32_t events) {
  bool received = false;
  bool sent = false;
  {
    std::lock_guard lock(core_.mu());
    if (core_.failed_locked()) return;
    read_and_write_locked(events, received, sent);
  }
  // Told once the lock is free: a lane woken under it would wake again to
  // take it.
  core_.notify(received, sent);
}

void TcpConnection::read_and_write_locked(uint32_t events, bool& received, bool& sent) {
  const size_t received_before = core_.inbox_size_locked();
  const uint64_t done_before = core_.done_locked();
  const uint64_t credits_before = core_.send_budget_locked().credits_that_moved();
  if (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) reader_.peer_hung_up();
  if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) reader_.read_available_locked(read_limit_locked());
  // A credit that arrived lets held frames go, and frames that arrived may
  // make one due: both write without the socket having said it has room.
  const bool credit_in = core_.send_budget_locked().credits_that_moved() != credits_before;
  const bool credit_out = queue_credit_if_due_locked();
  if ((events & EPOLLOUT) || credit_in || credit_out) writer_.write_available_locked();
  received = core_.inbox_size_locked() != received_before;
  sent = core_.done_locked() != done_before;
}

Result<std::optional<uint64_t>> TcpConnection::post(wire::FrameType type, uint32_t tag, uint64_t seq,
                                                    std::span<const iovec> parts) {
  std::lock_guard lock(core_.mu());
  if (core_.failed_locked()) return core_.failure_locked();
  if (core_.send_window_full_locked()) return std::optional<uint64_t>();
  uint64_t length = 0;
  for (const auto& p : parts) length += p.iov_len;
  const uint64_t ticket = core_.next_ticket_locked();
  // Alone in the queue: write now, on this thread; the loop finishes it.
  if (writer_.queue_locked(make_header(type, core_.job_id(), tag, seq, length), parts, ticket)) {
    TransportWork work;
    writer_.write_available_locked();
  }
  if (core_.failed_locked()) return core_.failure_locked();
  return std::optional<uint64_t>(ticket);
}

Status TcpConnection::send(wire::FrameType type, uint32_t tag, uint64_t seq, std::span<const iovec> parts) {
  // One deadline for the whole send: waiting for window room and writing.
  const auto deadline = ConnectionCore::Clock::now() + core_.timeout();
  while (true) {
    auto posted = post(type, tag, seq, parts);
    if (!posted.is_ok()) return posted.status();
    std::unique_lock lock(core_.mu());
    if (posted.value()) return core_.wait_send_done_locked(lock, *posted.value(), deadline);
    OMNIB_RETURN_IF_ERROR(core_.wait_send_room_locked(lock, deadline));
  }
}

void TcpConnection::frame_taken_locked(size_t held_before) {
  // The loop stopped reading at a full inbox and hears of no new data until
  // more arrives: read on from here (transport work on the lane that took
  // the frame, as the credit below; a frame taken alone is not).
  if (held_before >= read_limit_locked()) {
    TransportWork work;
    const size_t before = core_.inbox_size_locked();
    reader_.read_available_locked(read_limit_locked());
    if (core_.inbox_size_locked() != before) core_.notify_locked(true, false);
  }
  if (queue_credit_if_due_locked()) {
    TransportWork work;
    const uint64_t done_before = core_.done_locked();
    writer_.write_available_locked();
    core_.notify_locked(false, core_.done_locked() != done_before);
  }
}

std::string TcpConnection::partial_frame_locked() const {
  const size_t have = reader_.partial_bytes();
  return have == 0 ? std::string() : std::to_string(have) + " bytes arrived";
}

void TcpConnection::windows_changed_locked() {
  // The budget travels as credits, not as a smaller socket receive buffer:
  // a buffer shrunk to a few KiB held less than the window TCP had promised
  // (the kernel counts each packet's overhead, which small frames make
  // large), the excess was dropped, and a lost tail waited out a 200 ms
  // retransmission timeout. A wider window or a budget reads on, and the
  // socket may say nothing new about bytes already waiting in it.
  const size_t received_before = core_.inbox_size_locked();
  reader_.read_available_locked(read_limit_locked());
  if (queue_credit_if_due_locked()) writer_.write_available_locked();
  // A wider send window lets a waiting sender on.
  core_.notify_locked(core_.inbox_size_locked() != received_before, true);
}

uint64_t TcpConnection::credits_sent_with_frames() const {
  std::lock_guard lock(core_.mu());
  return writer_.credits_with_frames();
}

void TcpConnection::abort() {
  std::lock_guard lock(core_.mu());
  if (aborted_) return;
  aborted_ = true;
  shutdown(fd_, SHUT_RDWR);
  core_.fail_locked(unavailable_error(core_.name() + ": connection was aborted"));
}

// ---- Credits (docs/wire-format.md, "Credits on TCP links").

size_t TcpConnection::read_limit_locked() const {
  // With a budget the sender's credits bound what arrives, and the loop
  // reads on: a credit for this end's own sends may follow the frames (a
  // loop that stopped at a full inbox held it up, and two ranks each
  // waiting for the other's frames stalled).
  return core_.receive_budget_locked().budget() == 0 ? core_.recv_window_locked() : SIZE_MAX;
}

bool TcpConnection::queue_credit_if_due_locked() {
  ReceiveBudget& budget = core_.receive_budget_locked();
  if (core_.failed_locked()) return false;
  const uint64_t read = core_.bytes_read_locked();
  if (!budget.due(read, core_.bytes_arrived_locked(), reader_.partial_bytes() == 0)) return false;
  const wire::FrameHeader credit =
      make_header(wire::FrameType::kCredit, core_.job_id(), static_cast<uint32_t>(budget.budget()), read, 0);
  if (!writer_.queue_credit_locked(credit)) return false;
  budget.advertised(read);
  return true;
}

Status TcpConnection::take_credit_locked(const wire::FrameHeader& credit) {
  SendBudget& budget = core_.send_budget_locked();
  if (!budget.take(credit.seq, credit.tag))
    return unavailable_error(core_.name() + ": a credit for " + std::to_string(credit.seq) + " bytes read, but only " +
                             std::to_string(budget.started()) + " were sent (a corrupt stream?)");
  return Status::ok();
}

}  // namespace omnib
