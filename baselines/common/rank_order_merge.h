// Sums a region of the tensor from this rank's own values and the sparse
// streams (baselines/common/sparse_stream.h) its peers send for that region, in
// rank order: element i of the output is ((0 + v_0[i]) + v_1[i]) + ... with
// v_r rank r's value, the order the harness's reference sums in. A stream's
// missing elements are +0, whose sum is skipped without changing a bit (a
// sum that starts at +0 is never -0), so the result equals the reference bit
// for bit whatever the values, and every owner's sum is deterministic.
//
// The streams are read straight from their links, one frame each at a time,
// without blocking: advance() sums what has arrived and returns, so one lane
// can merge while it serves other links. The window of elements summed at
// once ends where the least advanced stream has delivered everything below,
// so memory stays one frame per peer plus a window of kWindow elements,
// whatever the region's size.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "baselines/common/sparse_stream.h"
#include "engine/base/tensor.h"

namespace omnib {

class RankOrderMerge {
 public:
  static constexpr size_t kWindow = 64 << 10;  // elements summed at once

  struct Source {
    int rank = 0;
    Connection* link = nullptr;  // receives only; nobody else may receive on it until its stream ended
  };

  // Begins a merge that writes out[begin, end) = the rank-order sum of
  // own[begin, end) (this rank's values, own_rank its rank) and one stream
  // per source, each tagged `tag` in collective `seq` and covering
  // [begin, end). `own` and `out` may be the same tensor; both must stay
  // until the merge is done.
  void start(DType dtype, const void* own, int own_rank, void* out, uint64_t begin, uint64_t end, uint32_t tag,
             uint64_t seq, const std::vector<Source>& sources);

  // Takes the frames that have arrived and sums every window they complete;
  // never blocks. Calls on_frame(i, ended) after each frame from source i;
  // ended is true for the stream's last one (its link is then free).
  // Returns true once every stream is read to its end and the region is
  // summed; `moved` is set when a frame was taken. An error from a link or a
  // bad frame ends the merge.
  using FrameObserver = std::function<void(size_t source, bool stream_ended)>;
  Result<bool> advance(const FrameObserver& on_frame, bool& moved);

  // The ranks whose next frame the merge waits for (for error messages).
  std::vector<int> waiting_on() const;

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

  // Takes the stream's next frame if it has arrived; false when it has not.
  Result<bool> fetch(Stream& s, size_t index, const FrameObserver& on_frame);
  // Adds the stream's items in [lo, hi) into acc (which holds element lo at 0).
  void add_items(Stream& s, uint64_t lo, uint64_t hi, void* acc);
  // Sums [lo_, hi) of every stream and this rank's values into the output.
  void sum_window(uint64_t hi);

  DType dtype_ = DType::kFloat32;
  const void* own_ = nullptr;
  int own_rank_ = 0;
  void* out_ = nullptr;
  uint64_t end_ = 0;
  uint64_t lo_ = 0;                // everything below is summed
  std::vector<Stream> streams_;    // as the sources were given
  std::vector<size_t> order_;      // stream indices in rank order
  std::vector<uint8_t> own_copy_;  // in place: this rank's values of the window
};

}  // namespace omnib
