#include "tools/trace/trace_gather.h"

#include <algorithm>
#include <optional>

#include <nlohmann/json.hpp>

#include "tools/config/json_fields.h"

namespace omnib {
namespace {

// 1 to kMaxTraceParts in decimal digits, nothing else (std::stoul would take
// "-1" as 2^64-1, and "12abc" as 12).
std::optional<size_t> parse_part_count(const std::string& text) {
  if (text.empty() || text.size() > 4) return std::nullopt;
  size_t n = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<size_t>(c - '0');
  }
  if (n < 1 || n > kMaxTraceParts) return std::nullopt;
  return n;
}

}  // namespace

Result<std::vector<RankTrace>> gather_rank_traces(Store& store, const std::string& name, int rank, int world,
                                                  const RankTrace& mine) {
  const std::string text = rank_trace_to_json(mine).dump();
  const size_t parts = std::max<size_t>(1, (text.size() + kTracePartBytes - 1) / kTracePartBytes);
  if (parts > kMaxTraceParts)
    return usage_error("rank " + std::to_string(rank) + " traced more than " +
                       std::to_string(kMaxTraceParts * (kTracePartBytes >> 20)) +
                       " MiB of spans in one configuration: lower --trace-iters or --trace-buffer");
  auto counts = store_gather_to_root(store, name + "/parts", rank, world, std::to_string(parts));
  if (!counts.is_ok()) return counts.status();
  // Every rank takes part in as many rounds as the rank with the most parts.
  size_t rounds = parts;
  if (rank == 0) {
    for (size_t r = 0; r < counts.value().size(); ++r) {
      auto n = parse_part_count(counts.value()[r]);
      if (!n)
        return internal_error("rank " + std::to_string(r) + " sent a trace part count (rendezvous value '" + name +
                              "/parts') that is not a count from 1 to " + std::to_string(kMaxTraceParts) + ": '" +
                              counts.value()[r].substr(0, 40) + "'");
      rounds = std::max(rounds, *n);
    }
    OMNIB_RETURN_IF_ERROR(store.set(name + "/rounds", std::to_string(rounds)));
  } else {
    auto r = store.get(name + "/rounds");
    if (!r.is_ok()) return r.status();
    auto n = parse_part_count(r.value());
    if (!n)
      return internal_error("rendezvous value '" + name + "/rounds' is not a count: '" + r.value().substr(0, 40) + "'");
    rounds = *n;
  }
  std::vector<std::string> texts(rank == 0 ? static_cast<size_t>(world) : 0);
  for (size_t i = 0; i < rounds; ++i) {
    const std::string part = i < parts ? text.substr(i * kTracePartBytes, kTracePartBytes) : "";
    auto all = store_gather_to_root(store, name + "/" + std::to_string(i), rank, world, part);
    if (!all.is_ok()) return all.status();
    for (size_t r = 0; r < texts.size(); ++r) texts[r] += all.value()[r];
  }
  std::vector<RankTrace> out;
  for (size_t r = 0; r < texts.size(); ++r) {
    auto j = parse_untrusted_json(texts[r]);
    auto t = rank_trace_from_json(j);
    if (!t.is_ok() || t.value().rank != static_cast<int>(r))
      return internal_error("rendezvous value '" + name + "' of rank " + std::to_string(r) + ": " +
                            (t.is_ok() ? "names another rank" : t.status().message()));
    out.push_back(t.take());
  }
  return out;
}

}  // namespace omnib
