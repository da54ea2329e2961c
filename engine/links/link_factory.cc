#include "engine/links/link_factory.h"

#include "engine/transport/local_connection.h"

namespace omnib {

void LinkSet::abort_all() {
  for (auto* ends : {&dialer_end, &acceptor_end})
    for (auto& c : *ends)
      if (c) c->abort();
}

ByteCounters LinkSet::wire_counters() const {
  ByteCounters total;
  for (const auto* ends : {&dialer_end, &acceptor_end})
    for (const auto& c : *ends)
      if (c && c->on_wire()) total += c->counters();
  return total;
}

Result<std::unique_ptr<LinkFactory>> LinkFactory::start(Store& store, int rank, int world, uint32_t job_id,
                                                        const JobToken& token, const std::string& bind_host,
                                                        std::chrono::milliseconds timeout,
                                                        const TransportChoice& transport) {
  DeviceContext context{&store, rank, job_id, token, bind_host, timeout};
  auto device = open_transport_device(transport, context);
  if (!device.is_ok()) return device.status();
  return std::unique_ptr<LinkFactory>(new LinkFactory(device.take(), rank, world, job_id, timeout));
}

// One establish() call: the plan's links and what is still missing.
struct LinkFactory::Plan {
  uint32_t number;
  const std::vector<LinkSpec>& specs;
  LinkSet set;
  size_t expected_incoming = 0;
  size_t expected_dialed = 0;
};

namespace {

std::string rank_list(const std::vector<int>& ranks) {
  std::string out;
  for (int r : ranks) out += (out.empty() ? "" : ", ") + std::to_string(r);
  return out;
}

}  // namespace

Result<LinkSet> LinkFactory::establish(const std::vector<LinkSpec>& specs) {
  Plan plan{next_plan_++, specs, {}, 0, 0};
  const auto deadline = deadline_after(timeout_);
  plan.set.dialer_end.resize(specs.size());
  plan.set.acceptor_end.resize(specs.size());

  for (size_t id = 0; id < specs.size(); ++id) {
    const LinkSpec& s = specs[id];
    if (s.dialer == rank_ && s.acceptor == rank_) {
      auto [a, b] = LocalConnection::make_pair(rank_, timeout_);
      plan.set.dialer_end[id] = std::move(a);
      plan.set.acceptor_end[id] = std::move(b);
    } else if (s.acceptor == rank_) {
      ++plan.expected_incoming;
    } else if (s.dialer == rank_) {
      const HelloClaim claim{job_id_, plan.number, static_cast<uint32_t>(rank_), static_cast<uint32_t>(id)};
      Status dialed = device_->dial(claim, s.acceptor, deadline);
      if (!dialed.is_ok())
        return dialed.with_context("rank " + std::to_string(rank_) + " -> rank " + std::to_string(s.acceptor) + ": ");
      ++plan.expected_dialed;
    }
  }

  // Links may have arrived while an earlier plan was being built.
  for (size_t id = 0; id < specs.size(); ++id) {
    auto it = early_arrivals_.find({plan.number, static_cast<uint32_t>(id)});
    if (it == early_arrivals_.end()) continue;
    EarlyArrival early = std::move(it->second);
    early_arrivals_.erase(it);
    OMNIB_RETURN_IF_ERROR(take(plan, static_cast<uint32_t>(id), early.dialer, std::move(early.conn)));
  }

  while (plan.expected_dialed > 0 || plan.expected_incoming > 0) {
    auto next = device_->next_link(deadline);
    if (!next.is_ok()) return next.status();
    if (!next.value()) {
      std::vector<int> from, to;
      for (size_t id = 0; id < specs.size(); ++id) {
        if (specs[id].acceptor == rank_ && specs[id].dialer != rank_ && !plan.set.acceptor_end[id])
          from.push_back(specs[id].dialer);
        if (specs[id].dialer == rank_ && specs[id].acceptor != rank_ && !plan.set.dialer_end[id])
          to.push_back(specs[id].acceptor);
      }
      return timeout_error("rank " + std::to_string(rank_) + " timed out setting up its links" +
                           (from.empty() ? "" : "; no hello from rank(s) " + rank_list(from)) +
                           (to.empty() ? "" : "; no challenge from rank(s) " + rank_list(to)) +
                           " (is a peer dead or stuck?)");
    }
    OMNIB_RETURN_IF_ERROR(place(plan, std::move(*next.value())));
  }
  return std::move(plan.set);
}

Status LinkFactory::place(Plan& plan, OpenedLink link) {
  if (link.dialed) {
    // Only this plan dials (a device returns every dialed link before the call ends).
    plan.set.dialer_end[link.claim.link_id] = std::move(link.conn);
    --plan.expected_dialed;
    return Status::ok();
  }
  // From here on the peer is a rank of this job: disagreements are real errors.
  if (link.claim.plan == plan.number) return take(plan, link.claim.link_id, link.peer, std::move(link.conn));
  if (link.claim.plan < plan.number) {
    ++stale_;
    return Status::ok();
  }
  auto [it, fresh] = early_arrivals_.try_emplace({link.claim.plan, link.claim.link_id},
                                                 EarlyArrival{link.peer, std::move(link.conn)});
  if (!fresh)
    return unavailable_error("rank " + std::to_string(rank_) + ": rank " + std::to_string(link.peer) +
                             " dialed link " + std::to_string(link.claim.link_id) + " of plan " +
                             std::to_string(link.claim.plan) + " twice");
  return Status::ok();
}

Status LinkFactory::take(Plan& plan, uint32_t link_id, int dialer, std::unique_ptr<Connection> conn) {
  const auto& specs = plan.specs;
  if (link_id >= specs.size() || specs[link_id].acceptor != rank_ || specs[link_id].dialer != dialer ||
      plan.set.acceptor_end[link_id])
    return unavailable_error("rank " + std::to_string(rank_) + ": unexpected link " + std::to_string(link_id) +
                             " from rank " + std::to_string(dialer) +
                             " (ranks disagree on the algorithm list or node count?)");
  plan.set.acceptor_end[link_id] = std::move(conn);
  --plan.expected_incoming;
  return Status::ok();
}

}  // namespace omnib
