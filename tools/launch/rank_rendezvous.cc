#include "tools/launch/rank_rendezvous.h"

#include <charconv>
#include <random>

#include "engine/bootstrap/tcp_store_client.h"
#include "tools/record/environment_info.h"

namespace omnib {
namespace {

// The job id rank 0 published: a non-zero 32-bit number, or an error naming the key.
Result<uint32_t> parse_job_id(const std::string& text) {
  uint32_t id = 0;
  auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (err != std::errc() || end != text.data() + text.size() || id == 0)
    return internal_error("the rendezvous store's key 'job_id' holds '" + text.substr(0, 40) +
                          "', not a job id: is another program writing to this job's store?");
  return id;
}

}  // namespace

Result<RankRendezvous> rendezvous_rank(const LaunchEnv& launch, int64_t timeout_s,
                                       const TransportChoice& transport) {
  if (timeout_s < 1 || timeout_s > kMaxWaitTimeout.count())
    return usage_error("--timeout " + std::to_string(timeout_s) + " is outside 1.." +
                       std::to_string(kMaxWaitTimeout.count()) + " seconds");
  const auto timeout = std::chrono::milliseconds(timeout_s * 1000);
  const JobToken token = launch.token.value_or(JobToken::unauthenticated());
  auto addr = parse_socket_address(launch.store_address);
  if (!addr.is_ok()) return addr.status();
  RankRendezvous met;
  if (launch.host_store) {
    // Only on MASTER_ADDR itself, never on every interface.
    raise_descriptor_limit();
    auto server = TcpStoreServer::start(addr.value(), token);
    if (!server.is_ok())
      return usage_error("rank 0 serves the rendezvous store at MASTER_ADDR:MASTER_PORT (" + addr.value().to_string() +
                         "), which must be an address of this host and a free port: " + server.status().message());
    met.server = server.take();
  }
  auto client = TcpStoreClient::connect(addr.value(), token, timeout);
  if (!client.is_ok()) return client.status();
  met.store = client.take();
  Store& store = *met.store;
  const int rank = launch.rank, world = launch.world;

  met.job_id = launch.job_id;
  if (met.job_id == 0) {
    if (rank == 0) OMNIB_RETURN_IF_ERROR(store.set("job_id", std::to_string(std::random_device{}() | 1u)));
    auto id = store.get("job_id");
    if (!id.is_ok()) return id.status().with_context("waiting for rank 0 (is it running?): ");
    auto parsed = parse_job_id(id.value());
    if (!parsed.is_ok()) return parsed.status();
    met.job_id = parsed.value();
  }
  auto links = LinkFactory::start(store, rank, world, met.job_id, token, launch.bind_host, timeout, transport);
  if (!links.is_ok()) return links.status();
  met.links = links.take();
  auto hosts = store_all_gather(store, "hosts", rank, world, host_name());
  if (!hosts.is_ok()) return hosts.status();
  met.hosts = hosts.take();
  auto latency = measure_barrier_latency_us(store, "start-up", world);
  if (!latency.is_ok()) return latency.status();
  met.barrier_latency_us = latency.value();
  return met;
}

}  // namespace omnib
