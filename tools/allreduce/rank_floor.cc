#include "tools/allreduce/rank_floor.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "engine/base/usable_cores.h"
#include "tools/common/json_fields.h"
#include "tools/measure/floor_cache.h"
#include "tools/measure/memory_bound.h"
#include "tools/measure/memory_floor.h"
#include "tools/record/environment_info.h"

namespace omnib {
namespace {

using nlohmann::json;

// The workers (ranks below `nodes`) on `host`, in rank order.
std::vector<int> workers_on(const std::vector<std::string>& hosts, int nodes, const std::string& host) {
  std::vector<int> out;
  for (int r = 0; r < nodes && r < static_cast<int>(hosts.size()); ++r)
    if (hosts[static_cast<size_t>(r)] == host) out.push_back(r);
  return out;
}

// Every rank's `mine`, parsed: what another rank sent is checked like any
// input from outside.
Result<std::vector<json>> gather_json(const FloorRun& run, const std::string& name, const json& mine, bool everyone) {
  auto parts = everyone ? store_all_gather(run.store, name, run.job.rank, run.job.world(), mine.dump())
                        : store_gather_to_root(run.store, name, run.job.rank, run.job.world(), mine.dump());
  if (!parts.is_ok()) return parts.status();
  std::vector<json> out;
  for (size_t r = 0; r < parts.value().size(); ++r) {
    json j = parse_untrusted_json(parts.value()[r]);
    if (j.is_discarded()) return internal_error("memory floor: rank " + std::to_string(r) + " sent what is not JSON");
    out.push_back(std::move(j));
  }
  return out;
}

// A measuring worker's timed passes: kFloorRepetitions triples of
// non-negative numbers (wall, busiest thread, all threads), as pass_json
// writes them.
json pass_json(const PassTime& p) { return json::array({p.wall_us, p.busiest_us, p.cpu_us}); }

Result<std::vector<PassTime>> rank_passes(const json& j, size_t rank) {
  const std::string what = "memory floor: rank " + std::to_string(rank) + " sent ";
  if (!j.is_array() || j.size() != static_cast<size_t>(kFloorRepetitions))
    return internal_error(what + "no " + std::to_string(kFloorRepetitions) + " timed passes");
  std::vector<PassTime> out;
  for (const auto& p : j) {
    if (!p.is_array() || p.size() != 3) return internal_error(what + "a pass that is not three times");
    for (const auto& t : p)
      if (!t.is_number() || !(t.get<double>() >= 0)) return internal_error(what + "a pass time that is negative");
    out.push_back({p[0].get<double>(), p[1].get<double>(), p[2].get<double>()});
  }
  return out;
}

// What one rank knows of the floor it takes part in.
struct RankFloor {
  FloorKey key;
  std::vector<int> mates;        // the workers of its host, itself included (none on an aggregator's own host)
  bool worker = false;           // holds tensors: takes part in the passes
  std::string file;              // its host's cache file; "" without a cache folder
  std::optional<double> cached;  // what the file holds
};

// Where the key and the file come from: this rank's host and the run.
RankFloor rank_floor(const FloorRun& run, uint64_t size_bytes, int dtype_bytes, bool has_tensors) {
  RankFloor f;
  const std::string& host = run.hosts.at(static_cast<size_t>(run.job.rank));
  f.mates = workers_on(run.hosts, run.job.nodes, host);
  f.worker = run.job.is_worker() && has_tensors;
  const int ranks = std::max<int>(1, static_cast<int>(f.mates.size()));
  const int cpus = std::max<int>(1, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));
  f.key = FloorKey{host, cpu_model(), ranks,       floor_threads_per_rank(ranks, usable_cores()),
                   cpus, size_bytes,  dtype_bytes, !run.in_place};
  if (!f.worker) return f;
  const std::string dir = floor_cache_dir();
  if (!dir.empty()) f.file = floor_cache_file(dir, f.key);
  f.cached = read_cached_floor(f.file, f.key);
  return f;
}

// The workers of every host where some worker found no floor kept make the
// passes at once, repetition by repetition; returns this rank's timed
// passes (none where it does not measure).
Result<json> make_passes(const FloorRun& run, const std::string& name, const RankFloor& me, void* input, void* output) {
  auto missing = gather_json(run, name + "/floor-lookup", json(me.worker && !me.cached), true);
  if (!missing.is_ok()) return missing.status();
  std::set<std::string> measuring;
  for (int r = 0; r < run.job.nodes; ++r)
    if (missing.value()[static_cast<size_t>(r)] == json(true)) measuring.insert(run.hosts[static_cast<size_t>(r)]);
  int participants = 0;
  for (int r = 0; r < run.job.nodes; ++r) participants += measuring.count(run.hosts[static_cast<size_t>(r)]) ? 1 : 0;
  json times = json::array();
  if (!me.worker || measuring.count(me.key.host) == 0) return times;
  std::memset(input, 0, me.key.size_bytes);
  for (int i = 0; i < kFloorWarmups + kFloorRepetitions; ++i) {
    OMNIB_RETURN_IF_ERROR(store_barrier(run.store, name + "/floor-pass/" + std::to_string(i), participants));
    auto pass = time_floor_pass(input, me.key.writes_output ? output : nullptr, me.key.size_bytes,
                                static_cast<size_t>(me.key.dtype_bytes), me.key.threads_per_rank);
    if (!pass.is_ok()) return pass.status();
    if (i >= kFloorWarmups) times.push_back(pass_json(pass.value()));
  }
  return times;
}

// A host's first worker: its host's floor, from its mates' passes (then
// kept in the cache) or from the cache.
Result<MemoryFloor> host_floor(const FloorRun& run, const RankFloor& me, const std::vector<json>& all_passes) {
  const FloorKey& key = me.key;
  MemoryFloor f{0,        kFloorFromCache, key.host,        key.cpu_model,     key.ranks,         key.threads_per_rank,
                key.cpus, key.size_bytes,  key.dtype_bytes, key.writes_output, kFloorRepetitions, me.file};
  if (all_passes[static_cast<size_t>(run.job.rank)].empty()) {
    f.floor_us = me.cached.value_or(0);
    return f;
  }
  MeasuredFloor m;
  m.command_line = run.command_line;
  for (int r : me.mates) {
    auto passes = rank_passes(all_passes[static_cast<size_t>(r)], static_cast<size_t>(r));
    if (!passes.is_ok()) return passes.status();
    m.passes.push_back(passes.take());
  }
  m.floor_us = host_floor_us(m.passes, key.cpus);
  f.floor_us = m.floor_us;
  f.source = kFloorMeasured;
  const Status kept =
      me.file.empty() ? usage_error("no cache folder: set " + std::string(kFloorCacheVar) + ", XDG_CACHE_HOME or HOME")
                      : write_cached_floor(me.file, key, m);
  if (!kept.is_ok()) {
    std::fprintf(stderr,
                 "omni-bench: rank %d: the memory floor of %s is not kept, so the next run measures it "
                 "again: %s\n",
                 run.job.rank, key.host.c_str(), kept.message().c_str());
    f.cache_file.clear();
  }
  return f;
}

}  // namespace

Result<std::optional<MemoryFloor>> measure_memory_floor(const FloorRun& run, const std::string& name,
                                                        uint64_t size_bytes, int dtype_bytes, void* input,
                                                        void* output) {
  const RankFloor me = rank_floor(run, size_bytes, dtype_bytes, input && output);
  auto passes = make_passes(run, name, me, input, output);
  if (!passes.is_ok()) return passes.status();
  auto all_passes = gather_json(run, name + "/floor-passes", passes.value(), true);
  if (!all_passes.is_ok()) return all_passes.status();
  json report = nullptr;
  if (me.worker && me.mates.front() == run.job.rank) {
    auto f = host_floor(run, me, all_passes.value());
    if (!f.is_ok()) return f.status();
    report = memory_floor_json(f.value());
  }
  // Rank 0 takes the slowest host's.
  auto reports = gather_json(run, name + "/floor-hosts", report, false);
  if (!reports.is_ok()) return reports.status();
  if (run.job.rank != 0) return std::optional<MemoryFloor>{};
  std::optional<MemoryFloor> slowest;
  for (size_t r = 0; r < reports.value().size(); ++r) {
    if (reports.value()[r].is_null()) continue;
    auto f = memory_floor_from_json(reports.value()[r]);
    if (!f.is_ok()) return internal_error("memory floor: rank " + std::to_string(r) + " sent " + f.status().message());
    if (!slowest || f.value().floor_us > slowest->floor_us) slowest = f.take();
  }
  return slowest;
}

void drop_beaten_floor(const MemoryFloor& floor, const std::vector<ResultRecord>& group) {
  const std::string beaten = beaten_floor(floor, group);
  if (beaten.empty()) return;
  std::error_code ec;
  std::string what = "it is not kept";
  if (!floor.cache_file.empty())
    what = std::filesystem::remove(floor.cache_file, ec)
               ? "its cache file is removed, so the next run measures it again"
               : "delete " + floor.cache_file + " on " + floor.host + " to measure it again";
  std::fprintf(stderr, "omni-bench: %s, so it is no floor: %s\n", beaten.c_str(), what.c_str());
}

}  // namespace omnib
