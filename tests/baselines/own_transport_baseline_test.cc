// The skeleton of the baselines on our own transport
// (baselines/common/own_transport_baseline.h): which calls it settles
// without the network, what it hands the algorithm, and that a failed call
// aborts; and the pieces its algorithms wait and frame with
// (lane_signal.h, dense_frames.h). The algorithms themselves are tested end
// to end (cpu_baselines_e2e_test.cc, tree_oktopk_e2e_test.cc).
#include "baselines/common/own_transport_baseline.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "baselines/common/dense_frames.h"
#include "baselines/common/lane_signal.h"

namespace omnib {
namespace {

using namespace std::chrono_literals;

// An algorithm without links that records what the skeleton hands it.
class Recorder final : public OwnTransportBaseline {
 public:
  using OwnTransportBaseline::Indices;
  Recorder(const JobLayout& job, Indices indices, Status result = Status::ok())
      : OwnTransportBaseline(setup_of(job), {}, 0, indices), result_(std::move(result)) {}

  // A wait that is ready at once: fails only once the call was aborted.
  Status wait_ready() {
    return signal().wait([] { return true; }, [] { return std::string("never stalls"); });
  }

  int calls = 0;
  uint64_t last_seq = 0;
  TensorView last_in, last_out;

 private:
  static CollectiveSetup setup_of(const JobLayout& job) {
    CollectiveSetup s;
    s.job = job;
    s.timeout = 1000ms;
    return s;
  }
  Status exchange() override {
    ++calls;
    last_seq = seq();
    last_in = in();
    last_out = out();
    return result_;
  }
  Status result_;
};

TensorView view_of(std::vector<float>& v) { return TensorView{v.data(), v.size(), DType::kFloat32, DeviceKind::kCpu}; }

TEST(OwnTransportBaseline, AggregatorRanksHoldNoTensor) {
  Recorder aggregator({.rank = 2, .nodes = 2, .aggregators = 1}, Recorder::Indices::kNone);
  const TensorView none{nullptr, 100, DType::kFloat32, DeviceKind::kCpu};
  EXPECT_TRUE(aggregator.allreduce(none, none).is_ok());
  EXPECT_EQ(aggregator.calls, 0);
}

TEST(OwnTransportBaseline, CountsThatDifferAreAUsageError) {
  Recorder r({.rank = 0, .nodes = 2}, Recorder::Indices::kNone);
  std::vector<float> in(8), out(9);
  EXPECT_EQ(r.allreduce(view_of(in), view_of(out)).code(), Code::kUsage);
  EXPECT_EQ(r.calls, 0);
}

TEST(OwnTransportBaseline, OneWorkerOrNoElementCopiesWithoutTheNetwork) {
  Recorder alone({.rank = 0, .nodes = 1}, Recorder::Indices::kNone);
  std::vector<float> in{1, -2, 3.5f}, out(3, 9);
  ASSERT_TRUE(alone.allreduce(view_of(in), view_of(out)).is_ok());
  EXPECT_EQ(out, in);
  EXPECT_TRUE(alone.allreduce(view_of(in), view_of(in)).is_ok());  // in place
  EXPECT_EQ(alone.calls, 0);

  Recorder empty({.rank = 1, .nodes = 3}, Recorder::Indices::kNone);
  std::vector<float> nothing;
  EXPECT_TRUE(empty.allreduce(view_of(nothing), view_of(nothing)).is_ok());
  EXPECT_EQ(empty.calls, 0);
}

TEST(OwnTransportBaseline, TensorsTooLongFor32BitIndicesAreRefused) {
  const size_t too_many = size_t{UINT32_MAX} + 1;
  const TensorView huge{nullptr, too_many, DType::kFloat32, DeviceKind::kCpu};
  for (int nodes : {1, 2}) {
    Recorder sparse({.rank = 0, .nodes = nodes}, Recorder::Indices::kUint32);
    const Status s = sparse.allreduce(huge, huge);
    EXPECT_EQ(s.code(), Code::kUsage) << nodes << " nodes";
    EXPECT_NE(s.message().find("32-bit indices"), std::string::npos) << s.message();
    EXPECT_EQ(sparse.calls, 0);
  }
  // Without indices the length is the algorithm's business.
  Recorder dense({.rank = 0, .nodes = 2}, Recorder::Indices::kNone);
  EXPECT_TRUE(dense.allreduce(huge, huge).is_ok());
  EXPECT_EQ(dense.calls, 1);
}

TEST(OwnTransportBaseline, EveryNetworkCallGetsTheNextSeqAndItsTensors) {
  Recorder r({.rank = 1, .nodes = 2}, Recorder::Indices::kUint32);
  std::vector<float> a(5), b(5);
  ASSERT_TRUE(r.allreduce(view_of(a), view_of(b)).is_ok());
  EXPECT_EQ(r.last_seq, 1u);
  EXPECT_EQ(r.last_in.data, a.data());
  EXPECT_EQ(r.last_out.data, b.data());
  ASSERT_TRUE(r.allreduce(view_of(b), view_of(b)).is_ok());
  EXPECT_EQ(r.last_seq, 2u);
  EXPECT_EQ(r.last_in.data, b.data());
  EXPECT_EQ(r.calls, 2);
  EXPECT_TRUE(r.wait_ready().is_ok());
}

// A failure part-way must abort: peers waiting on this rank, and this
// rank's own lanes, stop at once instead of waiting out the timeout.
TEST(OwnTransportBaseline, AFailedCallAbortsTheCall) {
  Recorder r({.rank = 0, .nodes = 2}, Recorder::Indices::kNone, unavailable_error("a link broke"));
  std::vector<float> a(4);
  EXPECT_EQ(r.allreduce(view_of(a), view_of(a)).code(), Code::kUnavailable);
  const Status after = r.wait_ready();
  EXPECT_EQ(after.code(), Code::kUnavailable) << "the wait did not see the abort: " << after.message();
}

TEST(BaselineLaneSignal, AWaitEndsWhenAnotherLaneUpdates) {
  LaneSignal signal(10s);
  int frames = 0;
  std::thread other([&] {
    std::this_thread::sleep_for(20ms);
    signal.update([&] { frames = 3; });
  });
  EXPECT_TRUE(signal.wait([&] { return frames >= 3; }, [] { return std::string("stalled"); }).is_ok());
  other.join();
}

TEST(BaselineLaneSignal, TimesOutSayingWhatDidNotCome) {
  LaneSignal signal(50ms);
  const Status s = signal.wait([] { return false; }, [] { return std::string("the data from rank 3"); });
  EXPECT_EQ(s.code(), Code::kTimeout);
  EXPECT_EQ(s.message(), "the data from rank 3");
}

TEST(BaselineLaneSignal, AbortWakesAWaiterAtOnceAndForGood) {
  LaneSignal signal(30s);
  const auto start = std::chrono::steady_clock::now();
  std::thread other([&] {
    std::this_thread::sleep_for(20ms);
    signal.abort();
  });
  EXPECT_EQ(signal.wait([] { return false; }, [] { return std::string("stalled"); }).code(), Code::kUnavailable);
  other.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  EXPECT_EQ(signal.wait([] { return true; }, [] { return std::string("stalled"); }).code(), Code::kUnavailable);
}

TEST(BaselineDenseFrames, FramesTileASlice) {
  const DenseFrames frames(4);  // 64K floats a frame
  const size_t per_frame = wire::kStreamFrameBytes / 4;
  const Slice slice{10, 2 * per_frame + 7};
  ASSERT_EQ(frames.count(slice.length), 3u);
  size_t next = slice.begin * 4;
  for (size_t f = 0; f < 3; ++f) {
    const DenseFrames::Span span = frames.frame(slice, f);
    EXPECT_EQ(span.offset, next);
    EXPECT_EQ(span.bytes, span.elements * 4);
    next += span.bytes;
  }
  EXPECT_EQ(next, slice.end() * 4);
  EXPECT_EQ(frames.frame(slice, 2).elements, 7u);
  EXPECT_EQ(frames.count(0), 0u);
  // Values and one 32-byte header per frame.
  EXPECT_EQ(frames.wire_bytes(static_cast<double>(slice.length)), slice.length * 4.0 + 3 * 32.0);
}

TEST(BaselineDenseFrames, TheCheckNamesWhatCameAndWhatWasExpected) {
  Frame good;
  good.header.type = static_cast<uint16_t>(wire::FrameType::kDense);
  good.header.seq = 7;
  good.header.tag = 2;
  good.payload.resize(16);
  EXPECT_TRUE(check_dense_frame(good, 1, 7, 2, 16, "the ring", "step").is_ok());

  std::vector<Frame> bad(4, good);
  bad[0].header.type = static_cast<uint16_t>(wire::FrameType::kSparse);
  bad[1].header.seq = 6;
  bad[2].header.tag = 3;
  bad[3].payload.resize(12);
  for (const Frame& f : bad) {
    const Status s = check_dense_frame(f, 1, 7, 2, 16, "the ring", "step");
    EXPECT_EQ(s.code(), Code::kUnavailable);
    EXPECT_NE(s.message().find("rank 1 sent"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("where the ring expects a dense frame of collective 7, step 2, 16 bytes"),
              std::string::npos)
        << s.message();
  }
}

}  // namespace
}  // namespace omnib
