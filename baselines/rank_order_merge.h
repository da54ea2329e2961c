// Sums a region of the tensor from this rank's own values and the sparse
// streams (baselines/sparse_stream.h) its peers send for that region, in
// rank order: element i of the output is ((0 + v_0[i]) + v_1[i]) + ... with
// v_r rank r's value, the order the harness's reference sums in. A stream's
// missing elements are +0, whose sum is skipped without changing a bit (a
// sum that starts at +0 is never -0), so the result equals the reference bit
// for bit whatever the values, and every owner's sum is deterministic.
//
// The streams are read straight from their links, one frame each at a time:
// the window of elements summed at once ends where the least advanced stream
// has delivered everything below, so memory stays one frame per peer plus a
// window of kWindow elements, whatever the region's size.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "baselines/sparse_stream.h"
#include "engine/tensor.h"

namespace omnib {

class RankOrderMerge {
 public:
  static constexpr size_t kWindow = 64 << 10;  // elements summed at once

  struct Source {
    int rank = 0;
    Connection* link = nullptr;  // receives only; no other thread may receive on it during run()
  };

  // Writes out[begin, end) = the rank-order sum of own[begin, end) (this
  // rank's values, own_rank its rank) and one stream per source, each
  // tagged `tag` in collective `seq` and covering [begin, end). `own` and
  // `out` may be the same tensor. Calls on_frame(i, ended) after each frame
  // from source i; ended is true for the stream's last one (its link is
  // then free). Blocks until every stream is read; each receive is bounded
  // by the link's timeout.
  using FrameObserver = std::function<void(size_t source, bool stream_ended)>;
  Status run(DType dtype, const void* own, int own_rank, void* out, uint64_t begin, uint64_t end, uint32_t tag,
             uint64_t seq, const std::vector<Source>& sources, const FrameObserver& on_frame);

 private:
  // One peer's stream: the frame being consumed and how far it has come.
  struct Stream {
    Source source;
    std::unique_ptr<ChunkReader> reader;
    Frame frame;
    Chunk chunk;
    size_t next_item = 0;   // first item of `chunk` not yet summed
    uint64_t covered = 0;   // every element below this has arrived
  };

  // Receives the stream's next frame.
  Status fetch(Stream& s, uint64_t end, size_t index, const FrameObserver& on_frame);
  // Adds the stream's items in [lo, hi) into acc (which holds element lo at 0).
  void add_items(DType dtype, Stream& s, uint64_t lo, uint64_t hi, void* acc);

  std::vector<Stream> streams_;    // in rank order
  std::vector<uint8_t> own_copy_;  // in place: this rank's values of the window
};

}  // namespace omnib
