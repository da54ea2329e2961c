// The sparse chunk reader (baselines/common/sparse_stream.cc ChunkReader): frame
// after frame of one stream, every chunk that passes lies inside the slice,
// sparse indices increase across the whole stream, dense chunks tile it.
//
// Input: uint64 begin | uint32 span | uint32 tag | uint64 seq, then frames,
// each uint16 type | uint32 tag | uint64 seq | uint32 length | payload. The
// tag's lowest bit picks the element size: 2 bytes (bf16, half) or 4.
#include <vector>

#include "baselines/common/sparse_stream.h"
#include "fuzz/fuzz_input.h"

using namespace omnib;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::FuzzInput in(data, size);
  const uint64_t begin = in.take<uint64_t>();
  const uint64_t end = begin + in.take<uint32_t>() % (uint64_t{1} << 20);
  if (end < begin) return 0;  // a slice that wraps is not one a caller can ask for
  const uint32_t tag = in.take<uint32_t>();
  const uint64_t seq = in.take<uint64_t>();
  const size_t elem = (tag & 1) ? 2 : 4;
  ChunkReader reader(begin, end, elem, tag, seq, 1, "fuzzed");
  Frame frame;
  Chunk chunk;
  int64_t last_index = -1;
  uint64_t dense_at = begin;
  while (!in.empty() && !reader.done()) {
    frame.header = wire::FrameHeader{};
    frame.header.type = in.take<uint16_t>();
    frame.header.tag = in.take<uint32_t>();
    frame.header.seq = in.take<uint64_t>();
    const auto bytes = in.take_bytes(in.take<uint32_t>());
    frame.header.length = bytes.size();
    frame.payload.assign(bytes.begin(), bytes.end());
    if (!reader.next(frame, chunk).is_ok()) return 0;

    const size_t item = chunk.dense ? elem : kIndexBytes + elem;
    if (chunk.elem_size != elem || sizeof(ChunkHeader) + size_t{chunk.items} * item != frame.payload.size())
      fuzz::fail("a chunk whose items do not fill its payload");
    uint32_t sum = 0;
    for (size_t i = 0; i < size_t{chunk.items} * elem; ++i) sum += chunk.values[i];
    if (chunk.dense) {
      if (chunk.first != dense_at || chunk.items > end - chunk.first) fuzz::fail("a dense chunk off the slice");
      dense_at += chunk.items;
    } else {
      for (uint32_t i = 0; i < chunk.items; ++i) {
        const int64_t idx = chunk.indices[i];
        if (idx <= last_index || static_cast<uint64_t>(idx) < begin || static_cast<uint64_t>(idx) >= end)
          fuzz::fail("a sparse index out of order or off the slice");
        last_index = idx;
      }
    }
    volatile uint32_t sink = sum;
    (void)sink;
  }
  if (reader.done() && dense_at != begin && dense_at != end) fuzz::fail("a dense stream that ended short");
  return 0;
}
