// A whole job, started the way mpirun or srun would with OMNIB_JOB_TOKEN
// exported, while a stranger on the same machine tries what issue 14 found:
// writing a non-JSON result into the store, driving a barrier counter,
// joining with a wrong token, and connecting to a rank's link port with
// another job's hello, random bytes, or silence. The job must not notice.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <thread>

#include "engine/bootstrap/tcp_store.h"
#include "engine/transport/link_hello.h"
#include "tests/support/cli_runner.h"
#include "tests/support/rank_launcher.h"
#include "tests/support/store_peer.h"

namespace omnib {
namespace {

using std::chrono::milliseconds;

// Reads a link challenge if one comes within `limit`.
bool read_challenge(int fd, Nonce& nonce, milliseconds limit) {
  char buf[sizeof(wire::FrameHeader) + sizeof(wire::ChallengePayload)];
  size_t have = 0;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (have < sizeof(buf) && std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 20) <= 0) continue;
    ssize_t r = recv(fd, buf + have, sizeof(buf) - have, 0);
    if (r <= 0) return false;
    have += static_cast<size_t>(r);
  }
  if (have < sizeof(buf)) return false;
  std::memcpy(nonce.data(), buf + sizeof(wire::FrameHeader), nonce.size());
  return true;
}

std::string v1_set(const std::string& key, const std::string& value) {
  struct {
    uint32_t magic, op, key_len, pad;
    uint64_t value_len;
  } h{store_wire::kMagic, 1, static_cast<uint32_t>(key.size()), 0, value.size()};
  return std::string(reinterpret_cast<const char*>(&h), sizeof(h)) + key + value;
}

TEST(StrangerEndToEnd, AJobWithATokenIgnoresStrangers) {
  const int world = 3;
  std::vector<std::string> errs;
  for (int r = 0; r < world; ++r) errs.push_back(testing::temp_path("rank" + std::to_string(r) + ".err"));
  const std::string json = testing::temp_path("out.json");
  // Rank 2 comes last, so everything below happens before any link is set up.
  auto ranks = testing::start_ranks({"allreduce", "--algo", "omni,ring", "-b", "64K", "-e", "64K", "-n", "3", "-w",
                                     "1", "-T", "10", "-J", json},
                                    world, {"OMNIB_JOB_TOKEN=" + testing::test_token().hex()}, errs, 2);
  const SocketAddress store{"127.0.0.1", static_cast<uint16_t>(ranks.port)};
  // Someone who knows where the store is, but not the token.
  auto wrong = TcpStoreClient::connect(store, testing::other_token(), milliseconds(10000));
  EXPECT_FALSE(wrong.is_ok());
  int writer = testing::raw_connect(store);
  EXPECT_TRUE(testing::send_raw(writer, v1_set("gather/cfg0/results/1", "not json")));
  EXPECT_TRUE(testing::closed_by_peer(writer, milliseconds(5000)));
  close(writer);
  // The link ports are in the store; reading them takes the token, but a port
  // scan would find them just the same.
  auto reader = TcpStoreClient::connect(store, testing::test_token(), milliseconds(10000));
  ASSERT_TRUE(reader.is_ok()) << reader.status().message();
  const SocketAddress port1 = parse_socket_address(reader.value()->get("addr/1").value()).value();
  const int other_job = testing::raw_connect(port1), noise = testing::raw_connect(port1),
            silent = testing::raw_connect(port1);
  EXPECT_TRUE(testing::send_raw(noise, std::string(64, '\x5a')));
  testing::start_held_rank(ranks, 2);
  Nonce nonce{};
  if (read_challenge(other_job, nonce, milliseconds(5000)))
    testing::send_raw(other_job, hello_frame(testing::other_token(), {12345, 0, 0, 0}, 1, nonce));

  const auto ends = testing::wait_ranks(ranks, std::chrono::seconds(40));
  for (int r = 0; r < world; ++r) EXPECT_EQ(ends[r].code, 0) << "rank " << r;
  const auto results = testing::read_json(json);
  EXPECT_EQ(results["results"].size(), 2u);
  std::ifstream f(errs[1]);
  const std::string err((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_NE(err.find("closed a connection to its link port"), std::string::npos) << err;
  for (int fd : {other_job, noise, silent}) close(fd);
}

// Under an external launcher rank 0 serves the store on MASTER_ADDR only,
// not on every interface (127.0.0.2 is this machine too, but not MASTER_ADDR).
TEST(StrangerEndToEnd, RankZeroServesTheStoreOnMasterAddrOnly) {
  auto ranks = testing::start_ranks({"allreduce", "-b", "4K", "-e", "4K", "-n", "1", "-T", "10"}, 2, {}, {}, 1);
  auto serving = [&] {
    int fd = testing::raw_connect({"127.0.0.1", static_cast<uint16_t>(ranks.port)});
    if (fd >= 0) close(fd);
    return fd >= 0;
  };
  ASSERT_TRUE(testing::eventually(serving, milliseconds(10000)));
  const int elsewhere = testing::raw_connect({"127.0.0.2", static_cast<uint16_t>(ranks.port)});
  EXPECT_LT(elsewhere, 0) << "the store listens beyond MASTER_ADDR";
  if (elsewhere >= 0) close(elsewhere);
  testing::start_held_rank(ranks, 1);
  for (const auto& end : testing::wait_ranks(ranks, std::chrono::seconds(20))) EXPECT_EQ(end.code, 0);
}

}  // namespace
}  // namespace omnib
