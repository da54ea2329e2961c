// The store server against strangers, idle and greedy clients, descriptor
// exhaustion and a thousand ranks: it stays bounded and keeps serving the job.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <thread>

#include "engine/bootstrap/tcp_store.h"
#include "tests/support/store_peer.h"

namespace omnib {
namespace {

using std::chrono::milliseconds;
using store_wire::Op;
using testing::closed_by_peer;
using testing::eventually;
using testing::raw_connect;
using testing::test_token;

std::unique_ptr<TcpStoreServer> serve(const StoreLimits& limits = {}) {
  auto server = TcpStoreServer::start({"127.0.0.1", 0}, test_token(), limits);
  EXPECT_TRUE(server.is_ok()) << server.status().message();
  return server.take();
}

std::unique_ptr<TcpStoreClient> client_of(const TcpStoreServer& server, milliseconds timeout = milliseconds(5000)) {
  auto c = TcpStoreClient::connect(server.address(), test_token(), timeout);
  EXPECT_TRUE(c.is_ok()) << c.status().message();
  return c.take();
}

// Version 1 of the protocol had no handshake: a request went straight in.
std::string v1_request(uint8_t op, const std::string& key, const std::string& value) {
  struct {
    uint32_t magic, pad_op;
    uint32_t key_len, pad;
    uint64_t value_len;
  } h{store_wire::kMagic, op, static_cast<uint32_t>(key.size()), 0, value.size()};
  return std::string(reinterpret_cast<const char*>(&h), sizeof(h)) + key + value;
}

// Two ranks doing what the harness does, while strangers try to write a
// non-JSON result and drive a barrier counter.
TEST(StoreHardening, ClientsWithoutTheTokenReachNothing) {
  auto server = serve();
  const std::string add_one(8, '\x01');
  std::vector<int> strangers = {raw_connect(server->address()), raw_connect(server->address()),
                                raw_connect(server->address())};
  EXPECT_TRUE(testing::send_raw(strangers[0], v1_request(1, "gather/cfg0/results/1", "not json")));
  EXPECT_TRUE(testing::send_raw(strangers[1], v1_request(3, "barrier/cfg0/0/0", add_one) +
                                                  v1_request(3, "barrier/cfg0/0/0", add_one)));
  // The new protocol's request, without the proof first.
  EXPECT_TRUE(testing::send_raw(strangers[2], testing::request_bytes(Op::kGather, "cfg0/results", "forged", 1, 2) +
                                                  std::string(64, '\0')));
  for (int fd : strangers) {
    EXPECT_TRUE(closed_by_peer(fd, milliseconds(2000)));
    close(fd);
  }
  auto wrong = TcpStoreClient::connect(server->address(), testing::other_token(), milliseconds(2000));
  EXPECT_FALSE(wrong.is_ok());

  std::vector<std::string> results;
  std::thread other([&] {
    auto c = client_of(*server);
    EXPECT_TRUE(c->barrier("cfg0/0/0", 2).is_ok());
    EXPECT_TRUE(c->gather("cfg0/results", 1, 2, "{\"w\":0}", GatherTo::kRoot).is_ok());
  });
  auto root = client_of(*server);
  EXPECT_TRUE(root->barrier("cfg0/0/0", 2).is_ok());
  results = root->gather("cfg0/results", 0, 2, "{\"w\":1}", GatherTo::kRoot).take();
  other.join();
  EXPECT_EQ(results, (std::vector<std::string>{"{\"w\":1}", "{\"w\":0}"}));
  const StoreStats st = server->stats();
  EXPECT_EQ(st.keys, 0u);
  EXPECT_EQ(st.connections_rejected, 4u);
}

// Announcing a huge value and then sending nothing used to cost the whole
// value at once (zero-filled); now bytes are buffered as they arrive.
TEST(StoreHardening, IdleConnectionsAnnouncingHugeValuesCostNoMemory) {
  StoreLimits limits;
  limits.max_buffered_bytes = 512u << 20;
  auto server = serve(limits);
  const uint64_t before = testing::resident_bytes();
  std::vector<int> idle;
  for (int i = 0; i < 8; ++i) {
    int fd = raw_connect(server->address());
    ASSERT_TRUE(testing::prove_as_client(fd, test_token()));
    std::string header = testing::request_bytes(Op::kSet, "k", "");
    uint64_t announced = 60u << 20;
    std::memcpy(header.data() + 24, &announced, sizeof(announced));
    ASSERT_TRUE(testing::send_raw(fd, header));
    idle.push_back(fd);
  }
  for (int i = 0; i < 8; ++i) {
    int fd = raw_connect(server->address());
    ASSERT_TRUE(testing::send_raw(fd, v1_request(1, "k", "").substr(0, 24)));  // v1 header announcing nothing yet
    idle.push_back(fd);
  }
  ASSERT_TRUE(eventually([&] { return server->stats().buffered_bytes >= 8 * (60u << 20); }, milliseconds(3000)));
  EXPECT_LT(testing::resident_bytes(), before + (16u << 20));
  // Still serving, and a request over the total cap is refused, not allocated.
  auto c = client_of(*server);
  EXPECT_TRUE(c->set("a", "b").is_ok());
  Status refused = c->set("big", std::string(60u << 20, 'x'));
  EXPECT_EQ(refused.code(), Code::kUsage);
  EXPECT_NE(refused.message().find("takes at most"), std::string::npos) << refused.message();
  EXPECT_EQ(c->get("a").value(), "b");  // the refusal kept the connection usable
  for (int fd : idle) close(fd);
  EXPECT_TRUE(eventually([&] { return server->stats().connections_open == 1; }, milliseconds(3000)));
  EXPECT_LT(server->stats().buffered_bytes, 1024u);
}

TEST(StoreHardening, ConnectAndCloseCyclesLeaveNoDescriptorsOpen) {
  auto server = serve();
  // libuv keeps one spare descriptor, opened with the first connection.
  EXPECT_TRUE(client_of(*server)->set("first", "client").is_ok());
  ASSERT_TRUE(eventually([&] { return server->stats().connections_open == 0; }, milliseconds(2000)));
  const int baseline = testing::open_descriptors();
  for (int i = 0; i < 3000; ++i) {
    int fd = raw_connect(server->address());
    ASSERT_GE(fd, 0) << "cycle " << i;
    if (i % 3 == 1) (void)testing::send_raw(fd, "garbage");
    if (i % 3 == 2) (void)testing::send_raw(fd, std::string(48, 'x'));  // a proof that fails
    close(fd);
  }
  EXPECT_TRUE(eventually([&] { return server->stats().connections_open == 0; }, milliseconds(5000)));
  EXPECT_TRUE(eventually([&] { return testing::open_descriptors() <= baseline; }, milliseconds(2000)))
      << testing::open_descriptors() << " descriptors open, " << baseline << " before";
  auto c = client_of(*server);
  EXPECT_TRUE(c->set("still", "serving").is_ok());
}

TEST(StoreHardening, ConnectionsThatNeverProveTheTokenAreClosed) {
  StoreLimits limits;
  limits.handshake_timeout_ms = 300;
  auto server = serve(limits);
  int silent = raw_connect(server->address());
  EXPECT_TRUE(closed_by_peer(silent, milliseconds(3000)));
  close(silent);
  EXPECT_EQ(server->stats().connections_rejected, 1u);
}

TEST(StoreHardening, AtTheCapANewConnectionPushesOutTheOldestStranger) {
  StoreLimits limits;
  limits.max_connections = 3;
  auto server = serve(limits);
  std::vector<int> strangers;
  for (int i = 0; i < 3; ++i) strangers.push_back(raw_connect(server->address()));
  ASSERT_TRUE(eventually([&] { return server->stats().connections_open == 3; }, milliseconds(2000)));
  auto a = client_of(*server);  // pushes out strangers[0]
  auto b = client_of(*server);  // and strangers[1]
  EXPECT_TRUE(closed_by_peer(strangers[0], milliseconds(2000)));
  EXPECT_TRUE(closed_by_peer(strangers[1], milliseconds(2000)));
  EXPECT_TRUE(a->set("k", "v").is_ok());
  EXPECT_EQ(b->get("k").value(), "v");
  auto c = client_of(*server);  // pushes out the last stranger
  auto d = TcpStoreClient::connect(server->address(), test_token(), milliseconds(1000));
  EXPECT_FALSE(d.is_ok());  // three proven clients: no room, nobody to push out
  for (int fd : strangers) close(fd);
}

// Out of descriptors, the old accept loop spun at full speed and served
// nobody. Runs the server in a child whose descriptor limit is low.
TEST(StoreHardening, DescriptorExhaustionNeitherSpinsNorStopsService) {
  int ctrl[2], ports[2];
  ASSERT_EQ(pipe(ctrl), 0);
  ASSERT_EQ(pipe(ports), 0);
  pid_t pid = fork();
  if (pid == 0) {
    close(ctrl[1]);
    rlimit lim{};
    getrlimit(RLIMIT_NOFILE, &lim);
    lim.rlim_cur = 48;
    setrlimit(RLIMIT_NOFILE, &lim);
    auto server = TcpStoreServer::start({"127.0.0.1", 0}, test_token());
    uint16_t port = server.is_ok() ? server.value()->address().port : 0;
    (void)!write(ports[1], &port, sizeof(port));
    char c;
    (void)!read(ctrl[0], &c, 1);  // until the parent closes its end
    _exit(0);
  }
  close(ctrl[0]);
  uint16_t port = 0;
  ASSERT_EQ(read(ports[0], &port, sizeof(port)), static_cast<ssize_t>(sizeof(port)));
  ASSERT_NE(port, 0);
  const SocketAddress addr{"127.0.0.1", port};
  auto early = TcpStoreClient::connect(addr, test_token(), milliseconds(5000));
  ASSERT_TRUE(early.is_ok()) << early.status().message();
  std::vector<int> flood;
  for (int i = 0; i < 80; ++i) flood.push_back(raw_connect(addr));
  std::this_thread::sleep_for(milliseconds(300));
  const double cpu_before = testing::cpu_seconds_of(pid);
  std::this_thread::sleep_for(milliseconds(1000));
  const double cpu_used = testing::cpu_seconds_of(pid) - cpu_before;
  EXPECT_LT(cpu_used, 0.25) << "the server spins while out of descriptors";
  EXPECT_TRUE(early.value()->set("k", "v").is_ok());
  EXPECT_EQ(early.value()->get("k").value(), "v");
  for (int fd : flood) close(fd);
  auto late = TcpStoreClient::connect(addr, test_token(), milliseconds(5000));
  ASSERT_TRUE(late.is_ok()) << late.status().message();
  EXPECT_EQ(late.value()->get("k").value(), "v");
  close(ctrl[1]);
  int status = 0;
  waitpid(pid, &status, 0);
}

TEST(StoreHardening, AThousandClientsBarrierAndGatherTogether) {
  constexpr int kClients = 1000;
  raise_descriptor_limit();
  rlimit lim{};
  getrlimit(RLIMIT_NOFILE, &lim);
  if (lim.rlim_cur < 2 * kClients + 100) GTEST_SKIP() << "needs " << 2 * kClients + 100 << " descriptors";
  auto server = serve();
  std::vector<std::thread> ranks;
  std::vector<int> ok(kClients, 0);
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < kClients; ++r) {
    ranks.emplace_back([&, r] {
      auto c = TcpStoreClient::connect(server->address(), test_token(), milliseconds(30000));
      if (!c.is_ok()) return;
      if (!c.value()->barrier("start", kClients).is_ok()) return;
      auto all = c.value()->gather("ranks", r, kClients, std::to_string(r), GatherTo::kEveryone);
      ok[r] = all.is_ok() && all.value().size() == kClients && all.value()[kClients - 1] == "999";
    });
  }
  for (auto& t : ranks) t.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(std::count(ok.begin(), ok.end(), 1), kClients);
  EXPECT_EQ(server->stats().pending_collectives, 0u);
  RecordProperty("seconds", std::to_string(seconds));
}

TEST(StoreHardening, ThousandsOfRoundsOverSocketsStayFlat) {
  auto server = serve();
  constexpr int kRounds = 3000;
  uint64_t most_bytes = 0, most_pending = 0;
  std::thread other([&] {
    auto c = client_of(*server);
    for (int i = 0; i < kRounds; ++i) {
      ASSERT_TRUE(c->barrier("b/" + std::to_string(i), 2).is_ok());
      ASSERT_TRUE(c->gather("g/" + std::to_string(i), 1, 2, "{\"t\":[1]}", GatherTo::kRoot).is_ok());
    }
  });
  auto root = client_of(*server);
  ASSERT_TRUE(root->set("addr/0", "127.0.0.1:1").is_ok());
  for (int i = 0; i < kRounds; ++i) {
    ASSERT_TRUE(root->barrier("b/" + std::to_string(i), 2).is_ok());
    ASSERT_EQ(root->gather("g/" + std::to_string(i), 0, 2, "{\"t\":[2]}", GatherTo::kRoot).value().size(), 2u);
    const StoreStats now = server->stats();
    most_bytes = std::max(most_bytes, now.value_bytes);
    most_pending = std::max(most_pending, now.pending_collectives);
  }
  other.join();
  const uint64_t kept = std::string("addr/0127.0.0.1:1").size();
  // At most the other rank's next barrier or gather is in progress.
  EXPECT_LE(most_bytes, kept + 32);
  EXPECT_LE(most_pending, 1u);
  const StoreStats end = server->stats();
  EXPECT_EQ(end.keys, 1u);
  EXPECT_EQ(end.value_bytes, kept);
  EXPECT_EQ(end.pending_collectives, 0u);
}

}  // namespace
}  // namespace omnib
