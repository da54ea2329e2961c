// The owner's sum of oktopk: streams from in-process links, summed with the
// owner's own values in rank order, must equal the reference's rank-order
// sum bit for bit even for values whose float sums depend on the order.
#include "baselines/common/rank_order_merge.h"

#include <gtest/gtest.h>

#include <bit>
#include <chrono>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "baselines/common/sparse_vector.h"
#include "engine/lanes/link_lane.h"
#include "engine/transport/local_connection.h"

namespace omnib {
namespace {

constexpr uint32_t kTag = 3;
constexpr uint64_t kSeq = 9;

// A rank's tensor: with probability `density` an element holds a value whose
// sum with others rounds (a fraction with many bits, either sign, or -0).
std::vector<float> random_tensor(size_t count, double density, uint32_t seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> value(-1000.0f, 1000.0f);
  std::vector<float> t(count, 0.0f);
  for (auto& x : t) {
    const double u = std::uniform_real_distribution<double>(0, 1)(g);
    if (u < density) x = u < density / 50 ? -0.0f : value(g) / 3.0f;
  }
  return t;
}

// Drives a merge the way oktopk's receive lane does: advance as far as the
// arrived frames allow, then wait for the next one.
Status merge_all(RankOrderMerge& merge, const void* own, int own_rank, void* out, uint64_t begin, uint64_t end,
                 uint64_t seq, const std::vector<RankOrderMerge::Source>& sources,
                 const RankOrderMerge::FrameObserver& on_frame) {
  Waker arrived;
  for (const auto& s : sources) s.link->set_wakers(&arrived, nullptr);
  merge.start(DType::kFloat32, own, own_rank, out, begin, end, kTag, seq, sources);
  const Status s = run_link_lane(
      arrived, std::chrono::seconds(10), nullptr,
      [&]() -> Result<LaneStep> {
        LaneStep step;
        auto done = merge.advance(on_frame, step.moved);
        if (!done.is_ok()) return done.status();
        step.done = done.value();
        return step;
      },
      [] { return std::string("the merge stalled"); });
  for (const auto& src : sources) src.link->set_wakers(nullptr, nullptr);
  return s;
}

struct MergeCase {
  size_t count;
  uint64_t begin, end;
  int owner;
  std::vector<double> density;  // per rank
  bool in_place = false;
};

void check_merge(const MergeCase& c) {
  const int ranks = static_cast<int>(c.density.size());
  std::vector<std::vector<float>> tensors;
  for (int r = 0; r < ranks; ++r)
    tensors.push_back(random_tensor(c.count, c.density[static_cast<size_t>(r)], 100 + static_cast<uint32_t>(r)));
  // The reference: 0 + v_0 + v_1 + ..., in rank order, as the harness sums.
  std::vector<float> expected(c.count, 0.0f);
  for (const auto& t : tensors)
    for (size_t i = 0; i < c.count; ++i) expected[i] += t[i];

  std::vector<std::unique_ptr<LocalConnection>> owner_ends, peer_ends;
  std::vector<RankOrderMerge::Source> sources;
  for (int r = ranks - 1; r >= 0; --r) {  // sources in reverse: the merge must sort them
    if (r == c.owner) continue;
    auto [mine, theirs] = LocalConnection::make_pair(r, std::chrono::seconds(10), 4);
    sources.push_back({r, mine.get()});
    owner_ends.push_back(std::move(mine));
    peer_ends.push_back(std::move(theirs));
  }
  std::vector<std::thread> peers;
  std::vector<Status> sent(peer_ends.size());
  for (size_t i = 0; i < peer_ends.size(); ++i) {
    peers.emplace_back([&, i] {
      const auto& t = tensors[static_cast<size_t>(sources[i].rank)];
      SparseVector scratch;
      // Each peer sends the smaller form of its part, as oktopk's senders do.
      sent[i] = send_vector(*peer_ends[i], kTag, kSeq, extract_smaller(t.data(), c.begin, c.end, 4, scratch));
    });
  }
  std::vector<float> own = tensors[static_cast<size_t>(c.owner)];
  std::vector<float> out(c.count, 123.0f);  // poison: outside the region it must stay
  float* dst = c.in_place ? own.data() : out.data();
  std::vector<int> ended(sources.size(), 0);
  RankOrderMerge merge;
  const Status s = merge_all(merge, own.data(), c.owner, dst, c.begin, c.end, kSeq, sources,
                             [&](size_t i, bool last) { ended[i] += last ? 1 : 0; });
  for (auto& t : peers) t.join();
  ASSERT_TRUE(s.is_ok()) << s.message();
  for (const Status& st : sent) EXPECT_TRUE(st.is_ok()) << st.message();
  for (size_t i = 0; i < ended.size(); ++i) EXPECT_EQ(ended[i], 1) << "source " << i;
  size_t wrong = 0;
  for (uint64_t i = c.begin; i < c.end; ++i)
    wrong += std::bit_cast<uint32_t>(dst[i]) != std::bit_cast<uint32_t>(expected[i]) ? 1 : 0;
  EXPECT_EQ(wrong, 0u) << "of " << c.end - c.begin;
  if (!c.in_place) {
    for (uint64_t i = 0; i < c.begin; ++i) ASSERT_EQ(out[i], 123.0f) << i;
    for (uint64_t i = c.end; i < c.count; ++i) ASSERT_EQ(out[i], 123.0f) << i;
  }
}

TEST(RankOrderMerge, MixedDenseAndSparseStreamsMatchTheRankOrderSumBitForBit) {
  // Rank 0 sends dense frames, 2 and 3 sparse ones of different lengths.
  check_merge({310000, 1000, 301000, 1, {0.9, 0.3, 0.2, 0.01}});
}

TEST(RankOrderMerge, OwnerFirstOrLast) {
  check_merge({200000, 0, 200000, 0, {0.5, 0.05, 0.9}});
  check_merge({200000, 7, 199999, 2, {0.5, 0.05, 0.9}});
}

TEST(RankOrderMerge, InPlace) { check_merge({150000, 5000, 140000, 1, {0.2, 0.7, 0.02, 1.0}, true}); }

TEST(RankOrderMerge, EmptyAndAllZeroStreams) {
  check_merge({1000, 400, 400, 1, {0.5, 0.5, 0.5}});
  check_merge({100000, 0, 100000, 2, {0.0, 0.0, 0.3}});
}

TEST(RankOrderMerge, StreamOfAnotherCollectiveIsRejected) {
  auto [mine, theirs] = LocalConnection::make_pair(1, std::chrono::seconds(5), 4);
  std::vector<float> zeros(100, 0.0f), out(100);
  std::thread peer([&, peer_end = theirs.get()] {
    SparseVector scratch;
    (void)send_vector(*peer_end, kTag, kSeq + 1, extract_smaller(zeros.data(), 0, 100, 4, scratch));
  });
  RankOrderMerge merge;
  const Status s = merge_all(merge, zeros.data(), 0, out.data(), 0, 100, kSeq, {{1, mine.get()}}, [](size_t, bool) {});
  peer.join();
  EXPECT_EQ(s.code(), Code::kUnavailable) << s.message();
}

}  // namespace
}  // namespace omnib
