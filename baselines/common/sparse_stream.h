// How the sparse baselines put a VectorView on a link: a stream of kSparse
// frames of about 256 KiB, each a ChunkHeader followed by its items, and the
// checked reading of such a stream. Prose: docs/algorithms.md ("Sparse
// streams").
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "baselines/common/sparse_vector.h"
#include "engine/base/status.h"
#include "engine/transport/connection.h"
#include "engine/transport/frame_format.h"

namespace omnib {

// Leads every frame of a sparse stream.
//   sparse chunk: uint32 index[items], then items values
//   dense chunk:  items values of elements [first, first + items)
// Values are elements of the stream's element size (both ends know it).
struct ChunkHeader {
  uint32_t items;
  uint8_t dense;  // 1: dense chunk, 0: (index, value) pairs
  uint8_t last;   // 1: the stream's final chunk
  uint16_t reserved;
  uint64_t first;  // dense: absolute index of the first value; sparse: 0
};
static_assert(sizeof(ChunkHeader) == 16, "the chunk header is 16 bytes on the wire");

constexpr size_t kStreamFrameBytes = wire::kStreamFrameBytes;  // payload budget of one frame, chunk header included

// Items one frame carries.
size_t chunk_capacity(bool dense, size_t elem_size);

// The frame of v's stream that starts at item `pos`: fills `h` and
// `parts` (which point into h and v) and returns how many parts it has;
// `items` is set to the items it carries. Blocking and posted sends both
// build their frames with it, so they put the same bytes on the wire.
size_t stream_frame(const VectorView& v, size_t pos, ChunkHeader& h, iovec (&parts)[3], size_t& items);

// Sends v as one stream (at least one frame, even when v is empty). Blocks
// until every frame is handed to the transport; v's memory may be reused on
// return.
Status send_vector(Connection& link, uint32_t tag, uint64_t seq, const VectorView& v);

// One decoded chunk; its pointers point into the frame it came from.
struct Chunk {
  bool dense = false;
  uint32_t items = 0;
  uint64_t first = 0;
  size_t elem_size = 4;
  const uint32_t* indices = nullptr;  // sparse only
  const uint8_t* values = nullptr;
  // The chunk as a view for add_view_into. A sparse chunk carries no range of
  // its own (begin = end = 0), so it must not be passed to write_view.
  VectorView view() const;
};

// Validates the frames of one stream in order: frame type, collective,
// tag, length, representation, index order and range, dense coverage.
class ChunkReader {
 public:
  // `begin`, `end`: the slice the stream covers; values are elem_size
  // bytes. `peer` and `what` name the stream in error messages.
  ChunkReader(uint64_t begin, uint64_t end, size_t elem_size, uint32_t tag, uint64_t seq, int peer,
              std::string what);

  // Decodes `frame` as the next chunk of the stream.
  Status next(const Frame& frame, Chunk& chunk);
  bool done() const { return done_; }
  uint32_t tag() const { return tag_; }

 private:
  Status reject(const std::string& why) const;

  uint64_t begin_, end_;
  size_t elem_size_;
  uint32_t tag_;
  uint64_t seq_;
  int peer_;
  std::string what_;
  bool started_ = false;
  bool dense_ = false;
  bool done_ = false;
  uint64_t next_dense_ = 0;  // dense: where the next chunk must start
  int64_t last_index_ = -1;  // sparse: the last index seen
};

// Receives one stream of elem_size-byte values from `link`, calling apply
// on each checked chunk.
Status receive_vector(Connection& link, uint32_t tag, uint64_t seq, uint64_t begin, uint64_t end, size_t elem_size,
                      const std::string& what, const std::function<void(const Chunk&)>& apply);

// Never blocks: takes the frames of the stream `reader` reads that have
// already arrived on `link` (at most a receive window of them), calling
// apply on each checked chunk, and stops at the stream's last frame (what
// follows stays on the link) or when nothing more waits. Returns whether a
// frame was taken. `frame` is scratch space the caller reuses.
Result<bool> take_arrived(Connection& link, ChunkReader& reader, Frame& frame,
                          const std::function<void(const Chunk&)>& apply);

// Receives one stream into `out`, whose range becomes [begin, end).
Status receive_vector(Connection& link, uint32_t tag, uint64_t seq, uint64_t begin, uint64_t end, size_t elem_size,
                      const std::string& what, SparseVector& out);

}  // namespace omnib
