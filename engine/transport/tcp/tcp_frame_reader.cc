#include "engine/transport/tcp/tcp_frame_reader.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

namespace omnib {
namespace {

constexpr size_t kHeaderBytes = sizeof(wire::FrameHeader);
constexpr size_t kSpillBytes = 64 << 10;
constexpr size_t kShortSpillBytes = 4 << 10;
// The most a low-water mark asks for: a long frame still wakes the loop
// every 256 KiB, so its bytes are taken while the rest arrives (the kernel
// caps the mark at half the receive buffer too).
constexpr size_t kMaxLowWater = 256 << 10;

}  // namespace

iovec TcpFrameReader::frame_room() {
  if (have_ < kHeaderBytes) return {reinterpret_cast<char*>(&reading_.header) + have_, kHeaderBytes - have_};
  return {reading_.payload.data() + (have_ - kHeaderBytes), kHeaderBytes + reading_.header.length - have_};
}

void TcpFrameReader::read_available_locked(size_t limit) {
  bool empty = false;  // the last read came back short: nothing more is waiting
  while (!core_.failed_locked() && core_.inbox_size_locked() < limit) {
    const iovec room = frame_room();
    size_t n = 0;
    if (spill_at_ < spill_end_) {
      n = std::min(room.iov_len, spill_end_ - spill_at_);
      std::memcpy(room.iov_base, spill_.data() + spill_at_, n);
      spill_at_ += n;
    } else {
      // A short read of a stream socket leaves it empty, and the loop is
      // told when more arrives (edge-triggered); after a hang-up only a read
      // of 0 bytes says the stream ended.
      if (empty && !peer_hung_up_) return wake_when_frame_can_finish();
      n = read_socket(room, empty);
      if (n == 0) {
        if (empty) wake_when_frame_can_finish();
        return;
      }
    }
    if (!frame_bytes_in(n)) return;
  }
}

size_t TcpFrameReader::read_socket(const iovec& room, bool& empty) {
  if (spill_.empty()) spill_.resize(kSpillBytes);
  // Behind a long payload, little: copying the next frame's start out of
  // the look-ahead would cost more than the read it saves.
  const size_t ahead = room.iov_len >= kSpillBytes ? kShortSpillBytes : kSpillBytes;
  iovec parts[2] = {room, {spill_.data(), ahead}};
  ssize_t got;
  do {
    got = readv(fd_, parts, 2);
  } while (got < 0 && errno == EINTR);
  if (got < 0) {
    empty = errno == EAGAIN || errno == EWOULDBLOCK;
    if (!empty)
      core_.fail_locked(unavailable_error(core_.name() + ": receive failed: " + std::strerror(errno) +
                                          " (did the peer die?)"));
    return 0;
  }
  if (got == 0) {
    core_.fail_locked(unavailable_error(core_.name() + ": the peer closed the connection (did it fail or exit?)"));
    return 0;
  }
  const size_t n = std::min(static_cast<size_t>(got), room.iov_len);
  spill_at_ = 0;
  spill_end_ = static_cast<size_t>(got) - n;
  empty = static_cast<size_t>(got) < room.iov_len + ahead;
  return n;
}

void TcpFrameReader::wake_when_frame_can_finish() {
  if (core_.failed_locked() || peer_hung_up_) return;
  // Between frames only the header is known to come: a peer may send a
  // lone header (a credit) and wait for the answer.
  const size_t frame = have_ < kHeaderBytes ? kHeaderBytes : kHeaderBytes + reading_.header.length;
  const int wanted = static_cast<int>(std::clamp<size_t>(frame - have_, 1, kMaxLowWater));
  if (wanted == low_water_) return;
  // A mark the kernel refuses only costs wake-ups: the reads stay right.
  if (setsockopt(fd_, SOL_SOCKET, SO_RCVLOWAT, &wanted, sizeof(wanted)) == 0) low_water_ = wanted;
}

bool TcpFrameReader::frame_bytes_in(size_t n) {
  const size_t before = have_;
  have_ += n;
  if (before < kHeaderBytes && have_ == kHeaderBytes && !header_in()) return false;
  if (have_ >= kHeaderBytes && have_ == kHeaderBytes + reading_.header.length) {
    core_.deliver_locked(std::move(reading_));
    reading_ = Frame{};
    core_.take_spare_locked(reading_.payload);
    have_ = 0;
  }
  return true;
}

bool TcpFrameReader::header_in() {
  // Checked before a byte of payload is allocated or read.
  const wire::FrameHeader& h = reading_.header;
  Status valid = validate_header(h, core_.job_id(), core_.peer_rank());
  const bool credit = h.type == static_cast<uint16_t>(wire::FrameType::kCredit);
  if (valid.is_ok() && credit && h.length != 0)
    valid = unavailable_error(core_.name() + ": a credit frame with " + std::to_string(h.length) +
                              " payload bytes, not none (a corrupt stream, or a peer of another build)");
  // Flow control, not a frame of the collective: neither delivered nor counted.
  if (valid.is_ok() && credit) {
    have_ = 0;
    valid = credits_.take_credit_locked(h);
  }
  if (!valid.is_ok()) {
    core_.fail_locked(valid);
    return false;
  }
  if (!credit) core_.size_payload_locked(reading_.payload, h.length);
  return true;
}

}  // namespace omnib
