#include "baselines/sparse/sparcml_recdbl.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "baselines/common/sparse_cost.h"
#include "baselines/common/sparse_stream.h"
#include "engine/trace/trace.h"

namespace omnib {
namespace {

constexpr uint32_t kTagFold = 1;     // extra rank -> its partner, before the rounds
constexpr uint32_t kTagResult = 2;   // partner -> extra rank, after the rounds
constexpr uint32_t kTagRound0 = 16;  // round k uses kTagRound0 + k

}  // namespace

RecursiveDoublingPlan::RecursiveDoublingPlan(int nodes) : n(nodes) {
  while (p * 2 <= n) {
    p *= 2;
    ++rounds;
  }
}

PeerPairs RecursiveDoublingPlan::pairs() const {
  PeerPairs out;
  for (int r = p; r < n; ++r) out.push_back({r - p, r});
  for (int k = 0; k < rounds; ++k)
    for (int r = 0; r < p; ++r)
      if (r < (r ^ (1 << k))) out.push_back({r, r ^ (1 << k)});
  return out;
}

SparcmlRecursiveDoubling::SparcmlRecursiveDoubling(const CollectiveSetup& setup, std::vector<PeerLinks> links)
    : OwnTransportBaseline(setup, std::move(links), 2, Indices::kUint32), plan_(setup.job.nodes) {}

Status SparcmlRecursiveDoubling::exchange() {
  const int r = job_.rank;
  const int p = plan_.p;
  const uint64_t count = in().count;
  load_smaller(in().data, 0, count, elem_size_, acc_);
  if (r >= p) {
    // An extra rank: hand its vector to rank r - p and wait for the sum.
    Connection& link = *links().to(r - p);
    OMNIB_RETURN_IF_ERROR(send_vector(link, kTagFold, seq(), acc_.view()));
    OMNIB_RETURN_IF_ERROR(
        receive_vector(link, kTagResult, seq(), 0, count, elem_size_, "sparcml-recdbl result", partner_));
    write_view(dtype_, partner_.view(), out().data);
    return Status::ok();
  }
  if (r + p < job_.nodes) {
    OMNIB_RETURN_IF_ERROR(
        receive_vector(*links().to(r + p), kTagFold, seq(), 0, count, elem_size_, "sparcml-recdbl fold", partner_));
    merge_into(dtype_, acc_, partner_, scratch_);
  }
  for (int k = 0; k < plan_.rounds; ++k)
    OMNIB_RETURN_IF_ERROR(exchange_with(r ^ (1 << k), kTagRound0 + static_cast<uint32_t>(k)));
  if (r + p < job_.nodes) OMNIB_RETURN_IF_ERROR(send_vector(*links().to(r + p), kTagResult, seq(), acc_.view()));
  write_view(dtype_, acc_.view(), out().data);
  return Status::ok();
}

Status SparcmlRecursiveDoubling::exchange_with(int peer, uint32_t tag) {
  trace::Span round("round", trace::Kind::kPhase, {.peer = peer, .step = static_cast<int32_t>(tag - kTagRound0)});
  Connection& link = *links().to(peer);
  // Both sides send at once: the sender lane and the receiver lane overlap,
  // so neither blocks on a full socket buffer.
  OMNIB_RETURN_IF_ERROR(run_lanes([&](int lane) -> Status {
    if (lane == 0) return send_vector(link, tag, seq(), acc_.view());
    return receive_vector(link, tag, seq(), 0, in().count, elem_size_, "sparcml-recdbl round", partner_);
  }));
  trace::Span merge("merge", trace::Kind::kCompute, {.peer = peer});
  merge_into(dtype_, acc_, partner_, scratch_);
  return Status::ok();
}

WireCost sparcml_recdbl_analytic_cost(const CostInputs& c) {
  const RecursiveDoublingPlan plan(c.nodes);
  if (plan.n <= 1 || c.count == 0) return {0, 0, true};  // settled without the network
  const double len = static_cast<double>(c.count);
  const InputSupport* support = exact_support(c);
  // A vector holding the sum of a set of ranks carries the union of their
  // non-zeros (merges keep the pairs of sums that cancel), in the smaller
  // form: it turns dense once the union is large enough and unions only
  // grow, so the first merge that densifies it keeps it dense.
  auto exact_bytes = [&](const std::vector<int>& ranks) {
    return smaller_stream_bytes(static_cast<double>(support->union_elements(ranks, 0, c.count)), len, c.elem_size);
  };
  // Without the inputs: the density of the sum of j ranks' vectors is d for
  // one rank, u for all n, and in between shaped like independent random
  // supports, 1 - (1-d)^j.
  const double d = c.stats.element_density;
  const double u = c.stats.union_element_density;
  auto union_of = [&](int j) {
    const double spread = 1 - std::pow(1 - d, plan.n) - d;
    if (j >= plan.n) return u;
    if (spread <= 1e-12) return j == 1 ? d : u;
    return d + (u - d) * (1 - std::pow(1 - d, j) - d) / spread;
  };
  auto vector_bytes = [&](const std::vector<int>& ranks) {
    if (support != nullptr) return exact_bytes(ranks);
    return smaller_stream_bytes(union_of(static_cast<int>(ranks.size())) * len, len, c.elem_size);
  };

  std::vector<int> everyone(static_cast<size_t>(plan.n));
  for (int r = 0; r < plan.n; ++r) everyone[static_cast<size_t>(r)] = r;
  std::vector<double> sent(static_cast<size_t>(plan.n), 0.0);
  for (int r = plan.p; r < plan.n; ++r) {
    sent[static_cast<size_t>(r)] += vector_bytes({r});                // fold
    sent[static_cast<size_t>(r - plan.p)] += vector_bytes(everyone);  // result back
  }
  for (int r = 0; r < plan.p; ++r) {
    for (int k = 0; k < plan.rounds; ++k) {
      // Before round k, rank r holds the ranks of its 2^k-block, plus the
      // extra ranks folded into any of them.
      const int block_start = r & ~((1 << k) - 1);
      std::vector<int> held;
      for (int q = block_start; q < block_start + (1 << k); ++q) {
        held.push_back(q);
        if (q + plan.p < plan.n) held.push_back(q + plan.p);
      }
      sent[static_cast<size_t>(r)] += vector_bytes(held);
    }
  }
  return wire_cost_of(sent, support != nullptr);
}

namespace {
const CollectiveRegistration kRecdbl(own_transport_baseline<SparcmlRecursiveDoubling>(
    {"sparcml-recdbl",
     "SparCML recursive doubling: log2(n) rounds of pairwise sparse exchange-and-merge, dense once denser", true,
     [](int nodes) { return std::vector<PeerPairs>{RecursiveDoublingPlan(nodes).pairs()}; },
     sparcml_recdbl_analytic_cost}));
}  // namespace

}  // namespace omnib
