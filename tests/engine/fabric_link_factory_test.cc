// Link set-up over --transport fabric with strangers at the endpoint: ranks
// as threads in one process meeting through a real store, as in
// link_factory_test.cc; the stranger is a libfabric endpoint of its own that
// knocks the way anyone on the fabric could (the address is in the store).
#include "engine/build_features.h"
#if OMNIB_WITH_LIBFABRIC

#include <gtest/gtest.h>

#include <cstring>
#include <future>

#include "engine/bootstrap/tcp_store.h"
#include "engine/transport/fabric/fabric_device.h"
#include "engine/transport/fabric/fabric_wire.h"
#include "engine/links/link_factory.h"
#include "tests/support/fabric_peer.h"
#include "tests/support/store_peer.h"

namespace omnib {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;
namespace fw = fabric_wire;
constexpr uint32_t kJob = 77;

struct Job {
  std::unique_ptr<TcpStoreServer> server = TcpStoreServer::start({"127.0.0.1", 0}, testing::test_token()).take();
  std::unique_ptr<TcpStoreClient> client() {
    return TcpStoreClient::connect(server->address(), testing::test_token(), milliseconds(5000)).take();
  }
};

struct Rank {
  std::unique_ptr<TcpStoreClient> store;
  std::unique_ptr<LinkFactory> links;
  Rank(Job& job, int rank, milliseconds timeout) : store(job.client()) {
    auto f = LinkFactory::start(*store, rank, 2, kJob, testing::test_token(), "127.0.0.1", timeout,
                                {TransportChoice::Kind::kFabric, testing::kTestProvider});
    EXPECT_TRUE(f.is_ok()) << f.status().message();
    links = f.take();
  }
};

// Someone with an endpoint of their own, knocking at rank `target`'s.
class Stranger {
 public:
  Stranger(Job& job, int target) : ep_(testing::open_test_endpoint()) {
    auto watcher = job.client();
    auto raw = parse_fabric_address(watcher->get("fabric-addr/" + std::to_string(target)).value(), ep_->provider(),
                                    target);
    EXPECT_TRUE(raw.is_ok()) << raw.status().message();
    to_ = testing::add_peer(*ep_, raw.value());
  }
  ~Stranger() { ep_->shutdown(); }

  // A knock as a dialer sends it, answering to `conn`.
  std::string knock(uint32_t job_id, uint32_t conn) const {
    fw::Knock k{};
    k.magic = wire::kMagic;
    k.version = wire::kVersion;
    k.job_id = job_id;
    k.dialer_conn = conn;
    k.address_len = static_cast<uint16_t>(ep_->address().size());
    std::memcpy(k.address, ep_->address().data(), ep_->address().size());
    return std::string(reinterpret_cast<const char*>(&k), sizeof(k));
  }
  bool send(uint64_t tag, const std::string& bytes) { return testing::send_raw_fabric(*ep_, to_, tag, bytes); }
  bool knock_with(uint32_t job_id, uint32_t conn) { return send(fw::tag(fw::Kind::kKnock, 0), knock(job_id, conn)); }
  // Knocks and waits for the challenge: its nonce and where to answer.
  bool challenged(uint32_t conn, Nonce& nonce, uint32_t& acceptor_conn) {
    auto got = std::async(std::launch::async, [&] {
      return testing::receive_raw_fabric(*ep_, to_, fw::tag(fw::Kind::kOpening, conn), milliseconds(5000));
    });
    if (!knock_with(kJob, conn)) return false;
    auto challenge = got.get();
    if (!challenge || challenge->size() != fw::kChallengeMessageBytes) return false;
    std::memcpy(nonce.data(), challenge->data() + sizeof(wire::FrameHeader), nonce.size());
    fw::OpeningTrailer trailer;
    std::memcpy(&trailer, challenge->data() + sizeof(wire::FrameHeader) + sizeof(wire::ChallengePayload),
                sizeof(trailer));
    acceptor_conn = trailer.acceptor_conn;
    return true;
  }

 private:
  std::shared_ptr<FabricEndpoint> ep_;
  fi_addr_t to_ = 0;
};

// Over a two-way link plan ({0,1}, {1,0}) each rank sends its number to the
// other and receives the other's.
void expect_working(LinkSet& rank0, LinkSet& rank1) {
  LinkSet* sets[2] = {&rank0, &rank1};
  for (int r = 0; r < 2; ++r) {
    auto& out = sets[r]->dialer_end[static_cast<size_t>(r)];
    ASSERT_TRUE(out);
    EXPECT_TRUE(out->send_bytes(wire::FrameType::kControl, 0, 0, &r, sizeof(r)).is_ok());
  }
  for (int r = 0; r < 2; ++r) {
    auto& in = sets[r]->acceptor_end[static_cast<size_t>(1 - r)];
    ASSERT_TRUE(in);
    Frame f;
    ASSERT_TRUE(in->recv(f).is_ok());
    int from = -1;
    std::memcpy(&from, f.payload.data(), sizeof(from));
    EXPECT_EQ(from, 1 - r);
  }
}

TEST(FabricLinks, StrangersAtTheEndpointDoNotEndSetUp) {
  Job job;
  Rank r0(job, 0, milliseconds(3000)), r1(job, 1, milliseconds(3000));
  Stranger stranger(job, 1), flooder(job, 1);
  ::testing::internal::CaptureStderr();
  // Another job's knock, random bytes, a message too long to be a knock
  // (after which the provider may hold up that sender's later messages:
  // it comes from an endpoint of its own).
  ASSERT_TRUE(stranger.knock_with(kJob + 1, 11));
  ASSERT_TRUE(stranger.send(fw::tag(fw::Kind::kKnock, 0), std::string("\x13\x37 not a knock \xff\xfe", 17)));
  ASSERT_TRUE(flooder.send(fw::tag(fw::Kind::kKnock, 0), std::string(6000, 'k')));
  // A hello proving another token, and one cut short.
  Nonce nonce{};
  uint32_t conn = 0;
  ASSERT_TRUE(stranger.challenged(12, nonce, conn));
  ASSERT_TRUE(stranger.send(fw::tag(fw::Kind::kOpening, conn),
                            hello_frame(testing::other_token(), {kJob, 0, 0, 0}, 1, nonce)));
  ASSERT_TRUE(stranger.challenged(13, nonce, conn));
  ASSERT_TRUE(stranger.send(fw::tag(fw::Kind::kOpening, conn),
                            hello_frame(testing::test_token(), {kJob, 0, 0, 0}, 1, nonce).substr(0, 40)));
  // And one that knocks and says nothing more.
  ASSERT_TRUE(stranger.challenged(14, nonce, conn));

  const std::vector<LinkSpec> plan = {{0, 1}, {1, 0}};
  const auto start = Clock::now();
  auto other = std::async(std::launch::async, [&] { return r0.links->establish(plan); });
  auto mine = r1.links->establish(plan);
  auto theirs = other.get();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  ASSERT_TRUE(mine.is_ok()) << mine.status().message();
  ASSERT_TRUE(theirs.is_ok()) << theirs.status().message();
  EXPECT_LT(seconds, 2.0) << "a silent stranger held up set-up";
  expect_working(theirs.value(), mine.value());
  const uint64_t rejected = r1.links->rejected_connections();
  // The silent one is turned away once its hello is overdue.
  EXPECT_TRUE(testing::eventually([&] { return r1.links->rejected_connections() == 6; }, milliseconds(6000)))
      << r1.links->rejected_connections();
  EXPECT_EQ(rejected, 5u);
  const std::string err = ::testing::internal::GetCapturedStderr();
  size_t logged = 0;
  for (size_t at = err.find("turned away a peer at its fabric endpoint"); at != std::string::npos;
       at = err.find("turned away a peer at its fabric endpoint", at + 1))
    ++logged;
  EXPECT_EQ(logged, 1u) << err;
}

// A hello for a later plan is kept until that plan is built, and then it must
// come from the plan's dialer.
TEST(FabricLinks, EarlyArrivalsMustComeFromThePlansDialer) {
  Job job;
  Rank r0(job, 0, milliseconds(2000)), r1(job, 1, milliseconds(2000));
  Stranger forger(job, 1);
  // Knows the token and the job id, and claims to be rank 0 dialing link 0 of plan 1.
  Nonce nonce{};
  uint32_t conn = 0;
  ASSERT_TRUE(forger.challenged(21, nonce, conn));
  ASSERT_TRUE(
      forger.send(fw::tag(fw::Kind::kOpening, conn), hello_frame(testing::test_token(), {kJob, 1, 0, 0}, 1, nonce)));
  const std::vector<LinkSpec> first = {{0, 1}};
  auto other = std::async(std::launch::async, [&] { return r0.links->establish(first); });
  ASSERT_TRUE(r1.links->establish(first).is_ok());
  ASSERT_TRUE(other.get().is_ok());
  auto second = r1.links->establish({{2, 1}});
  EXPECT_EQ(second.status().code(), Code::kUnavailable) << second.status().message();
  EXPECT_NE(second.status().message().find("unexpected link 0 from rank 0"), std::string::npos)
      << second.status().message();
}

// More receives posted than rxm's default receive queue holds (each link
// keeps a window of them): every link still gets its credits and carries
// its frames.
TEST(FabricLinks, ManyLinksBetweenTwoRanksAllCarryFrames) {
  Job job;
  Rank r0(job, 0, milliseconds(10000)), r1(job, 1, milliseconds(10000));
  std::vector<LinkSpec> plan;
  for (int i = 0; i < 160; ++i) plan.push_back(i % 2 ? LinkSpec{1, 0} : LinkSpec{0, 1});
  auto other = std::async(std::launch::async, [&] { return r0.links->establish(plan); });
  auto mine = r1.links->establish(plan);
  auto theirs = other.get();
  ASSERT_TRUE(mine.is_ok()) << mine.status().message();
  ASSERT_TRUE(theirs.is_ok()) << theirs.status().message();
  LinkSet* sets[2] = {&theirs.value(), &mine.value()};
  for (size_t id = 0; id < plan.size(); ++id) {
    const uint64_t n = id;
    ASSERT_TRUE(sets[plan[id].dialer]->dialer_end[id]->send_bytes(wire::FrameType::kControl, 0, n, &n, sizeof(n)).is_ok());
  }
  for (size_t id = 0; id < plan.size(); ++id) {
    Frame f;
    Status got = sets[plan[id].acceptor]->acceptor_end[id]->recv(f);
    ASSERT_TRUE(got.is_ok()) << "link " << id << ": " << got.message();
    EXPECT_EQ(f.header.seq, id);
  }
}

TEST(FabricLinks, APeerThatNeverComesIsATimeoutNamingIt) {
  Job job;
  Rank r1(job, 1, milliseconds(500));
  const auto start = Clock::now();
  auto set = r1.links->establish({{0, 1}});
  EXPECT_EQ(set.status().code(), Code::kTimeout);
  EXPECT_NE(set.status().message().find("no hello from rank(s) 0"), std::string::npos) << set.status().message();
  EXPECT_LT(Clock::now() - start, milliseconds(1500));
}

TEST(FabricLinks, RanksOnDifferentProvidersAreToldSo) {
  auto wrong = parse_fabric_address("net|0a0b", "tcp;ofi_rxm", 3);
  EXPECT_EQ(wrong.status().code(), Code::kUnavailable);
  EXPECT_NE(wrong.status().message().find("rank 3 opened libfabric provider net, this rank tcp;ofi_rxm"),
            std::string::npos)
      << wrong.status().message();
  EXPECT_FALSE(parse_fabric_address("tcp;ofi_rxm|0a0", "tcp;ofi_rxm", 3).is_ok());
  EXPECT_FALSE(parse_fabric_address("tcp;ofi_rxm|zz", "tcp;ofi_rxm", 3).is_ok());
  auto right = parse_fabric_address("tcp;ofi_rxm|0aff", "tcp;ofi_rxm", 3);
  ASSERT_TRUE(right.is_ok());
  EXPECT_EQ(right.value(), std::string("\x0a\xff", 2));
}

}  // namespace
}  // namespace omnib

#endif  // OMNIB_WITH_LIBFABRIC
