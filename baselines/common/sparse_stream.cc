#include "baselines/common/sparse_stream.h"

#include <algorithm>
#include <cstring>

#include "engine/trace/trace.h"

namespace omnib {

size_t chunk_capacity(bool dense, size_t elem_size) {
  const size_t item = dense ? elem_size : kIndexBytes + elem_size;
  return std::max<size_t>(1, (kStreamFrameBytes - sizeof(ChunkHeader)) / item);
}

size_t stream_frame(const VectorView& v, size_t pos, ChunkHeader& h, iovec (&parts)[3], size_t& items) {
  const size_t elem = v.elem_size;
  const size_t total = v.items();
  const size_t n = std::min(chunk_capacity(v.dense, elem), total - pos);
  h = ChunkHeader{static_cast<uint32_t>(n), static_cast<uint8_t>(v.dense ? 1 : 0),
                  static_cast<uint8_t>(pos + n == total ? 1 : 0), 0, v.dense ? v.begin + pos : 0};
  size_t count = 0;
  parts[count++] = {&h, sizeof(h)};
  if (n > 0 && !v.dense) parts[count++] = {const_cast<uint32_t*>(v.indices + pos), n * kIndexBytes};
  if (n > 0) parts[count++] = {const_cast<uint8_t*>(v.values + pos * elem), n * elem};
  items = n;
  return count;
}

Status send_vector(Connection& link, uint32_t tag, uint64_t seq, const VectorView& v) {
  size_t pos = 0;
  do {
    ChunkHeader h;
    iovec parts[3];
    size_t n = 0;
    const size_t count = stream_frame(v, pos, h, parts, n);
    trace::Span send("send frame", trace::Kind::kSend, {.peer = link.peer_rank(), .step = static_cast<int32_t>(tag)});
    send.set_bytes_of(std::span<const iovec>(parts, count));
    OMNIB_RETURN_IF_ERROR(link.send(wire::FrameType::kSparse, tag, seq, std::span<const iovec>(parts, count)));
    pos += n;
  } while (pos < v.items());
  return Status::ok();
}

VectorView Chunk::view() const {
  VectorView v;
  v.dense = dense;
  v.begin = dense ? first : 0;
  v.end = dense ? first + items : 0;
  v.elem_size = elem_size;
  v.pairs = dense ? 0 : items;
  v.indices = indices;
  v.values = values;
  return v;
}

ChunkReader::ChunkReader(uint64_t begin, uint64_t end, size_t elem_size, uint32_t tag, uint64_t seq, int peer,
                         std::string what)
    : begin_(begin), end_(end), elem_size_(elem_size), tag_(tag), seq_(seq), peer_(peer), what_(std::move(what)), next_dense_(begin) {}

Status ChunkReader::reject(const std::string& why) const {
  return unavailable_error("rank " + std::to_string(peer_) + " sent a bad " + what_ + " frame: " + why +
                           " (ranks out of step, or a different build?)");
}

Status ChunkReader::next(const Frame& frame, Chunk& chunk) {
  const size_t elem = elem_size_;
  const wire::FrameHeader& h = frame.header;
  if (done_) return reject("it came after the stream's last chunk");
  if (frame.type() != wire::FrameType::kSparse)
    return reject("frame type " + std::to_string(h.type) + ", expected " +
                  std::to_string(static_cast<int>(wire::FrameType::kSparse)));
  if (h.seq != seq_) return reject("collective " + std::to_string(h.seq) + ", this rank is on " + std::to_string(seq_));
  if (h.tag != tag_) return reject("stream tag " + std::to_string(h.tag) + ", expected " + std::to_string(tag_));
  if (frame.payload.size() < sizeof(ChunkHeader)) return reject("payload shorter than a chunk header");
  ChunkHeader c;
  std::memcpy(&c, frame.payload.data(), sizeof(c));
  const bool dense = c.dense != 0;
  if (started_ && dense != dense_) return reject("representation changed inside one stream");
  const size_t item = dense ? elem : kIndexBytes + elem;
  if (frame.payload.size() != sizeof(ChunkHeader) + static_cast<size_t>(c.items) * item)
    return reject(std::to_string(frame.payload.size()) + " payload bytes for " + std::to_string(c.items) + " items");
  const uint8_t* body = frame.payload.data() + sizeof(ChunkHeader);
  chunk.dense = dense;
  chunk.items = c.items;
  chunk.first = c.first;
  chunk.elem_size = elem;
  if (dense) {
    if (c.first != next_dense_ || c.items > end_ - next_dense_)
      return reject("dense chunk [" + std::to_string(c.first) + ", +" + std::to_string(c.items) +
                    ") does not continue the slice at " + std::to_string(next_dense_) + " (ends at " +
                    std::to_string(end_) + ")");
    next_dense_ += c.items;
    chunk.indices = nullptr;
    chunk.values = body;
  } else {
    chunk.indices = reinterpret_cast<const uint32_t*>(body);
    chunk.values = body + static_cast<size_t>(c.items) * kIndexBytes;
    for (uint32_t i = 0; i < c.items; ++i) {
      const int64_t index = chunk.indices[i];
      if (index <= last_index_ || static_cast<uint64_t>(index) < begin_ || static_cast<uint64_t>(index) >= end_)
        return reject("index " + std::to_string(index) + " is out of order or outside [" + std::to_string(begin_) +
                      ", " + std::to_string(end_) + ")");
      last_index_ = index;
    }
  }
  started_ = true;
  dense_ = dense;
  if (c.last) {
    if (dense && next_dense_ != end_)
      return reject("dense stream ended at " + std::to_string(next_dense_) + " before the slice end " +
                    std::to_string(end_));
    done_ = true;
  }
  return Status::ok();
}

Status receive_vector(Connection& link, uint32_t tag, uint64_t seq, uint64_t begin, uint64_t end, size_t elem_size,
                      const std::string& what, const std::function<void(const Chunk&)>& apply) {
  ChunkReader reader(begin, end, elem_size, tag, seq, link.peer_rank(), what);
  Frame frame;
  Chunk chunk;
  while (!reader.done()) {
    trace::Span recv("recv frame", trace::Kind::kRecv, {.peer = link.peer_rank(), .step = static_cast<int32_t>(tag)});
    OMNIB_RETURN_IF_ERROR(link.recv(frame));
    recv.set_bytes(frame.payload.size());
    recv.end();
    trace::Span work("add chunk", trace::Kind::kCompute, {.step = static_cast<int32_t>(tag)});
    OMNIB_RETURN_IF_ERROR(reader.next(frame, chunk));
    apply(chunk);
  }
  return Status::ok();
}

Result<bool> take_arrived(Connection& link, ChunkReader& reader, Frame& frame,
                          const std::function<void(const Chunk&)>& apply) {
  const auto step = static_cast<int32_t>(reader.tag());
  Chunk chunk;
  bool took = false;
  // At most a window's worth, so that one busy link cannot hold the lane.
  for (size_t left = link.recv_window(); left > 0 && !reader.done(); --left) {
    auto got = link.try_recv(frame);
    if (!got.is_ok()) return got.status();
    if (!got.value()) break;
    took = true;
    const int64_t arrived = trace::now_ns();  // a point: the frame is whole
    trace::record("recv frame", trace::Kind::kRecv, arrived, arrived,
                  {.peer = link.peer_rank(), .step = step, .bytes = frame.payload.size()});
    trace::Span work("add chunk", trace::Kind::kCompute, {.step = step});
    OMNIB_RETURN_IF_ERROR(reader.next(frame, chunk));
    apply(chunk);
  }
  return took;
}

Status receive_vector(Connection& link, uint32_t tag, uint64_t seq, uint64_t begin, uint64_t end, size_t elem_size,
                      const std::string& what, SparseVector& out) {
  bool first = true;
  return receive_vector(link, tag, seq, begin, end, elem_size, what, [&](const Chunk& c) {
    if (first) {
      out.reset(begin, end, false, elem_size);
      out.dense = c.dense;
      if (c.dense) out.values.resize(static_cast<size_t>(end - begin) * elem_size);  // every element arrives
      first = false;
    }
    if (c.dense) {
      std::memcpy(out.values.data() + (c.first - begin) * elem_size, c.values, c.items * elem_size);
    } else {
      out.indices.insert(out.indices.end(), c.indices, c.indices + c.items);
      out.values.insert(out.values.end(), c.values, c.values + c.items * elem_size);
    }
  });
}

}  // namespace omnib
