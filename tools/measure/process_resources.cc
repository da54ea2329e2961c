#include "tools/measure/process_resources.h"

#include <dirent.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "tools/common/json_fields.h"

namespace omnib {
namespace {

using nlohmann::json;

std::string proc_dir(pid_t pid) { return pid == 0 ? "/proc/self" : "/proc/" + std::to_string(pid); }

// Reads "VmRSS:   1234 kB" and "Threads:  7" lines of /proc/<pid>/status.
Status read_status(const std::string& dir, ResourceSample& out) {
  std::ifstream in(dir + "/status");
  if (!in) return unavailable_error("cannot read " + dir + "/status: " + std::strerror(errno));
  std::string line;
  int found = 0;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string key;
    uint64_t value = 0;
    if (!(fields >> key >> value)) continue;
    if (key == "VmRSS:") out.rss_bytes = value * 1024, ++found;
    else if (key == "VmHWM:") out.peak_rss_bytes = value * 1024, ++found;
    else if (key == "Threads:") out.threads = value, ++found;
  }
  if (found != 3) return unavailable_error(dir + "/status lacks VmRSS, VmHWM or Threads (is this Linux?)");
  return Status::ok();
}

Status count_descriptors(const std::string& dir, ResourceSample& out) {
  DIR* d = opendir((dir + "/fd").c_str());
  if (!d) return unavailable_error("cannot list " + dir + "/fd: " + std::strerror(errno));
  const std::string own = std::to_string(dirfd(d));
  const bool self = dir == "/proc/self";
  uint64_t n = 0;
  while (const dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    if (self && own == e->d_name) continue;
    ++n;
  }
  closedir(d);
  out.fds = n;
  return Status::ok();
}

json sample_json(const ResourceSample& s) {
  return json{{"rss_bytes", s.rss_bytes}, {"peak_rss_bytes", s.peak_rss_bytes}, {"threads", s.threads}, {"fds", s.fds}};
}

Status read_sample(const json& j, const char* name, ResourceSample& s) {
  auto o = object_field(j, name);
  if (!o.is_ok()) return o.status();
  const json& v = *o.value();
  const std::string where = std::string(name) + ": ";
  OMNIB_RETURN_IF_ERROR(read_field(v, "rss_bytes", s.rss_bytes).with_context(where));
  OMNIB_RETURN_IF_ERROR(read_field(v, "peak_rss_bytes", s.peak_rss_bytes).with_context(where));
  OMNIB_RETURN_IF_ERROR(read_field(v, "threads", s.threads).with_context(where));
  return read_field(v, "fds", s.fds).with_context(where);
}

json series_json(const std::vector<ResourcePoint>& series) {
  json out = json::array();
  for (const ResourcePoint& p : series) out.push_back({p.round, p.rss_bytes, p.threads, p.fds});
  return out;
}

// [[round, rss_bytes, threads, fds], ...], rounds increasing and below `rounds`.
Status read_series(const json& j, uint64_t rounds, std::vector<ResourcePoint>& out) {
  if (!j.contains("series") || !j["series"].is_array()) return usage_error("field 'series': expected an array");
  for (const json& p : j["series"]) {
    const bool four_counts = p.is_array() && p.size() == 4 &&
                             std::all_of(p.begin(), p.end(), [](const json& v) { return v.is_number_unsigned(); });
    if (!four_counts) return usage_error("field 'series': expected [round, rss_bytes, threads, fds] of non-negative integers");
    const ResourcePoint point{p[0].get<uint64_t>(), p[1].get<uint64_t>(), p[2].get<uint64_t>(), p[3].get<uint64_t>()};
    if (point.round >= rounds || (!out.empty() && point.round <= out.back().round))
      return usage_error("field 'series': rounds must increase and stay below 'rounds' (" + std::to_string(rounds) + ")");
    out.push_back(point);
  }
  return Status::ok();
}

}  // namespace

Result<ResourceSample> read_resources(pid_t pid) {
  const std::string dir = proc_dir(pid);
  ResourceSample s;
  OMNIB_RETURN_IF_ERROR(read_status(dir, s));
  OMNIB_RETURN_IF_ERROR(count_descriptors(dir, s));
  return s;
}

json to_json(const ProcessResources& p) {
  return json{{"role", p.role},       {"rank", p.rank},     {"start", sample_json(p.start)},
              {"end", sample_json(p.end)}, {"calls", p.calls},   {"seconds", p.seconds},
              {"rounds", p.rounds},        {"series", series_json(p.series)}};
}

Result<ProcessResources> process_resources_from_json(const json& j) {
  if (!j.is_object()) return usage_error("resources: expected an object");
  ProcessResources p;
  OMNIB_RETURN_IF_ERROR(read_field(j, "role", p.role));
  if (p.role != kLauncherRole && p.role != kWorkerRole && p.role != kAggregatorRole)
    return usage_error("field 'role': '" + p.role.substr(0, 40) + "' is not launcher, worker or aggregator");
  OMNIB_RETURN_IF_ERROR(read_field(j, "rank", p.rank));
  OMNIB_RETURN_IF_ERROR(read_sample(j, "start", p.start));
  OMNIB_RETURN_IF_ERROR(read_sample(j, "end", p.end));
  OMNIB_RETURN_IF_ERROR(read_field(j, "calls", p.calls));
  OMNIB_RETURN_IF_ERROR(read_field(j, "seconds", p.seconds));
  if (!(p.seconds >= 0)) return usage_error("field 'seconds': must not be negative");
  OMNIB_RETURN_IF_ERROR(read_field(j, "rounds", p.rounds));
  OMNIB_RETURN_IF_ERROR(read_series(j, p.rounds, p.series));
  return p;
}

Status ResourceWatch::start() {
  auto s = read_resources(pid_);
  if (!s.is_ok()) return s.status();
  start_ = s.value();
  started_at_ = std::chrono::steady_clock::now();
  return Status::ok();
}

Result<ProcessResources> ResourceWatch::report(uint64_t calls) {
  if (!start_) OMNIB_RETURN_IF_ERROR(start());
  auto now = read_resources(pid_);
  if (!now.is_ok()) return now.status();
  ProcessResources p;
  p.role = role_;
  p.rank = rank_;
  p.start = *start_;
  p.end = now.value();
  p.calls = calls;
  p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_at_).count();
  return p;
}

}  // namespace omnib
