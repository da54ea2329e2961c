// Reads a TCP link's frames off its non-blocking socket into its
// ConnectionCore. Each header is checked before a byte of its payload is
// read; a credit header (wire::kCredit) goes to the connection instead of
// the inbox.
//
// Each read also fills a look-ahead buffer with what follows the frame being
// read (the next frames' headers, small frames, credits), so that a wake-up
// costs one read, not a read per header and per payload and one more to
// learn that the socket is empty. And when the socket runs dry inside a
// frame, the socket's receive low-water mark is raised to what the frame
// still lacks: the loop is then woken once the frame is whole, not once per
// packet (a 4 KiB frame on a slow link came as three wake-ups).
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>

#include "engine/transport/connection_core.h"

namespace omnib {

class TcpFrameReader {
 public:
  // Where credit headers go (mu held). An error fails the link.
  class CreditSink {
   public:
    virtual ~CreditSink() = default;
    virtual Status take_credit_locked(const wire::FrameHeader& credit) = 0;
  };

  TcpFrameReader(int fd, ConnectionCore& core, CreditSink& credits) : fd_(fd), core_(core), credits_(credits) {}

  // Reads whole frames into the core while its inbox holds fewer than
  // `limit` and the socket has bytes. Fails the core on a read error, a
  // closed peer or a bad header. mu held.
  void read_available_locked(size_t limit);
  // The peer hung up: from now on only a read of 0 bytes says the stream ended.
  void peer_hung_up() { peer_hung_up_ = true; }
  // Bytes of the frame being read, header included (0: between frames).
  size_t partial_bytes() const { return have_; }

 private:
  // Where the next bytes of the frame being read go.
  iovec frame_room();
  // Reads the socket into `room` and the look-ahead. The bytes that went
  // to `room`; 0 when the socket is empty or the link failed.
  size_t read_socket(const iovec& room, bool& empty);
  // `n` bytes went to the frame room: a header checked, a credit taken, a
  // frame delivered. False once the link failed.
  bool frame_bytes_in(size_t n);
  // The header is whole: checked, and a credit taken or the payload sized.
  bool header_in();
  // The socket is empty: asks to be woken when the frame being read can be
  // finished (or the next header read), through SO_RCVLOWAT.
  void wake_when_frame_can_finish();

  const int fd_;
  ConnectionCore& core_;
  CreditSink& credits_;
  Frame reading_;    // the frame being read
  size_t have_ = 0;  // bytes of it read so far, header included
  // Bytes [spill_at_, spill_end_) of the look-ahead are read and not yet
  // taken; at most its size beyond a full inbox.
  UninitBytes spill_;
  size_t spill_at_ = 0;
  size_t spill_end_ = 0;
  bool peer_hung_up_ = false;  // read to EOF: a short read no longer says the socket is empty
  int low_water_ = 1;          // the socket's SO_RCVLOWAT, as last set
};

}  // namespace omnib
