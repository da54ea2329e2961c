#include "tools/trace/trace_gather.h"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace omnib {

Result<std::vector<RankTrace>> gather_rank_traces(Store& store, const std::string& name, int rank, int world,
                                                  const RankTrace& mine) {
  const std::string text = rank_trace_to_json(mine).dump();
  const size_t parts = std::max<size_t>(1, (text.size() + kTracePartBytes - 1) / kTracePartBytes);
  auto counts = store_gather_to_root(store, name + "/parts", rank, world, std::to_string(parts));
  if (!counts.is_ok()) return counts.status();
  // Every rank takes part in as many rounds as the rank with the most parts.
  size_t rounds = parts;
  if (rank == 0) {
    for (const auto& c : counts.value()) {
      size_t n = 0;
      try {
        n = std::stoul(c);
      } catch (const std::exception&) {
        return internal_error("rendezvous value '" + name + "/parts' is not a count: '" + c + "'");
      }
      rounds = std::max(rounds, n);
    }
    OMNIB_RETURN_IF_ERROR(store.set(name + "/rounds", std::to_string(rounds)));
  } else {
    auto r = store.get(name + "/rounds");
    if (!r.is_ok()) return r.status();
    try {
      rounds = std::stoul(r.value());
    } catch (const std::exception&) {
      return internal_error("rendezvous value '" + name + "/rounds' is not a count: '" + r.value() + "'");
    }
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
    auto j = nlohmann::json::parse(texts[r], nullptr, false);
    auto t = rank_trace_from_json(j);
    if (!t.is_ok() || t.value().rank != static_cast<int>(r))
      return internal_error("rendezvous value '" + name + "' of rank " + std::to_string(r) + ": " +
                            (t.is_ok() ? "names another rank" : t.status().message()));
    out.push_back(t.take());
  }
  return out;
}

}  // namespace omnib
