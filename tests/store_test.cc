#include <gtest/gtest.h>

#include <thread>

#include "engine/bootstrap/tcp_store.h"

namespace omnib {
namespace {

using std::chrono::milliseconds;

TEST(TcpStore, SetGetAddAndWait) {
  auto server = TcpStoreServer::start({"127.0.0.1", 0});
  ASSERT_TRUE(server.is_ok());
  auto a = TcpStoreClient::connect(server.value()->address(), milliseconds(2000));
  auto b = TcpStoreClient::connect(server.value()->address(), milliseconds(2000));
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  std::thread late([&] {
    std::this_thread::sleep_for(milliseconds(50));
    EXPECT_TRUE(a.value()->set("k", std::string("v\0w", 3)).is_ok());
  });
  auto v = b.value()->get("k");  // waits for the set
  late.join();
  ASSERT_TRUE(v.is_ok());
  EXPECT_EQ(v.value(), std::string("v\0w", 3));
  EXPECT_EQ(a.value()->add("n", 2).value(), 2);
  EXPECT_EQ(b.value()->add("n", 5).value(), 7);
}

TEST(TcpStore, GetOfAMissingKeyTimesOut) {
  auto server = TcpStoreServer::start({"127.0.0.1", 0});
  auto c = TcpStoreClient::connect(server.value()->address(), milliseconds(200));
  auto v = c.value()->get("never");
  EXPECT_EQ(v.status().code(), Code::kTimeout);
}

TEST(TcpStore, BarrierAndGathers) {
  auto server = TcpStoreServer::start({"127.0.0.1", 0});
  constexpr int kWorld = 4;
  std::vector<std::vector<std::string>> gathered(kWorld), rooted(kWorld);
  std::vector<std::thread> ranks;
  for (int r = 0; r < kWorld; ++r) {
    ranks.emplace_back([&, r] {
      auto c = TcpStoreClient::connect(server.value()->address(), milliseconds(5000));
      ASSERT_TRUE(c.is_ok());
      for (int round = 0; round < 3; ++round)
        ASSERT_TRUE(store_barrier(*c.value(), "b" + std::to_string(round), kWorld).is_ok());
      gathered[r] = store_all_gather(*c.value(), "g", r, kWorld, "rank" + std::to_string(r)).take();
      rooted[r] = store_gather_to_root(*c.value(), "h", r, kWorld, std::to_string(r * r)).take();
    });
  }
  for (auto& t : ranks) t.join();
  for (int r = 0; r < kWorld; ++r) {
    EXPECT_EQ(gathered[r], (std::vector<std::string>{"rank0", "rank1", "rank2", "rank3"}));
    EXPECT_EQ(rooted[r].size(), r == 0 ? 4u : 0u);
  }
  EXPECT_EQ(rooted[0][3], "9");
}

TEST(TcpStore, ConnectGivesUpWhenNoServer) {
  auto server = TcpStoreServer::start({"127.0.0.1", 0});
  SocketAddress addr = server.value()->address();
  server.value().reset();
  auto c = TcpStoreClient::connect(addr, milliseconds(300));
  EXPECT_FALSE(c.is_ok());
}

}  // namespace
}  // namespace omnib
