#include "tools/measure/floor_cache.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "tools/common/atomic_file.h"
#include "tools/common/json_fields.h"
#include "tools/common/regular_file.h"
#include "tools/record/environment_info.h"

namespace omnib {

using nlohmann::json;

namespace {

// Part of the key: changes whenever the passes or the statistic change
// (bump the version when the code changes them), so that floors measured
// another way are measured again rather than taken.
std::string floor_method() {
  return "v1: scan of an all-zero input in blocks of " + std::to_string(kFloorBlockElements) +
         " elements, then memset of the output unless in place, by each rank's share of the cores as threads; "
         "the least over " +
         std::to_string(kFloorRepetitions) + " repetitions (after " + std::to_string(kFloorWarmups) +
         " untimed) of max(busiest thread's CPU time, all threads' CPU time / cpus)";
}
// Far more than a file of any host's ranks needs.
constexpr uint64_t kMaxCacheFileBytes = 1 << 20;

const char* env_value(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

// Host names are the user's: only what is safe in a file name is kept.
std::string file_safe(const std::string& s) {
  std::string out;
  for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.') ? c : '_';
  return out.empty() ? "host" : out.substr(0, 64);
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

}  // namespace

json FloorKey::to_json() const {
  return json{{"method", floor_method()},
              {"host", host},
              {"cpu_model", cpu_model},
              {"ranks", ranks},
              {"threads_per_rank", threads_per_rank},
              {"cpus", cpus},
              {"size_bytes", size_bytes},
              {"dtype_bytes", dtype_bytes},
              {"writes_output", writes_output}};
}

std::string floor_cache_dir() {
  if (const char* dir = env_value(kFloorCacheVar)) return dir;
  if (const char* xdg = env_value("XDG_CACHE_HOME")) return std::string(xdg) + "/omni-bench/memory-floor";
  if (const char* home = env_value("HOME")) return std::string(home) + "/.cache/omni-bench/memory-floor";
  return "";
}

std::string floor_cache_file(const std::string& dir, const FloorKey& key) {
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(fnv1a(key.to_json().dump())));
  return dir + "/" + file_safe(key.host) + "-" + std::to_string(key.ranks) + "r-" + std::to_string(key.size_bytes) +
         "B-" + std::to_string(key.dtype_bytes) + "e-" + hash + ".json";
}

std::optional<double> read_cached_floor(const std::string& file, const FloorKey& key) {
  std::error_code ec;
  if (file.empty() || !std::filesystem::exists(file, ec)) return std::nullopt;
  auto text = read_regular_file(file, kMaxCacheFileBytes, "memory floor cache file", "");
  if (!text.is_ok()) return std::nullopt;
  const json j = parse_untrusted_json(text.value());
  if (!j.is_object() || !j.contains("key") || j["key"] != key.to_json()) return std::nullopt;
  double floor_us = 0;
  if (!read_field(j, "floor_us", floor_us).is_ok() || !(floor_us > 0)) return std::nullopt;
  return floor_us;
}

Status write_cached_floor(const std::string& file, const FloorKey& key, const MeasuredFloor& floor) {
  const std::filesystem::path dir = std::filesystem::path(file).parent_path();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return usage_error("cannot make the memory floor cache folder '" + dir.string() + "': " + ec.message() + ": set " +
                       kFloorCacheVar + " to a folder you may write");
  json passes = json::array();
  for (const auto& worker : floor.passes) {
    json reps = json::array();
    for (const PassTime& p : worker)
      reps.push_back({{"wall_us", p.wall_us}, {"busiest_us", p.busiest_us}, {"cpu_us", p.cpu_us}});
    passes.push_back(reps);
  }
  const json j{{"key", key.to_json()},
               {"floor_us", floor.floor_us},
               {"warmups", kFloorWarmups},
               {"repetitions", kFloorRepetitions},
               {"passes", passes},
               {"command_line", floor.command_line},
               {"measured_at", utc_timestamp()}};
  return write_file_atomically(file, j.dump(2) + "\n");
}

}  // namespace omnib
