#include "tools/measure/peer_bounds.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "tools/measure/resource_series.h"

namespace omnib {
namespace {

constexpr double kMaxBytesPerSecond = 1e12;   // 1 TB/s: beyond any link or memory copy
constexpr double kMaxFramesPerSecond = 1e9;
constexpr double kMaxCallsPerSecond = 1e7;    // a collective call takes at least a round trip
constexpr double kMaxCores = 4096;
constexpr double kMaxResidentBytes = 1125899906842624.0;  // 2^50, 1 PiB
constexpr double kMaxThreads = 4194304;                   // 2^22, Linux's own limit
constexpr double kMaxDescriptors = 2147483648.0;          // 2^31

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// Usage error unless 0 <= v <= max (NaN and infinity fail).
Status within(double v, double max, const std::string& field, const char* unit) {
  if (v >= 0 && v <= max) return Status::ok();
  return usage_error("field '" + field + "' is " + number(v) + " " + unit + ", outside [0, " + number(max) + "] " +
                     unit + ", what the run could have produced so far");
}

Status check_times(const RankSamples& s, const PeerBounds& b) {
  for (const auto& run : s.times_us)
    for (double t : run) OMNIB_RETURN_IF_ERROR(within(t, b.max_us(), "t", "us"));
  for (const auto& c : s.cpu) {
    OMNIB_RETURN_IF_ERROR(within(c.user_us, b.max_us() * kMaxCores, "cpu", "us"));
    OMNIB_RETURN_IF_ERROR(within(c.sys_us, b.max_us() * kMaxCores, "cpu", "us"));
    OMNIB_RETURN_IF_ERROR(within(c.transport_us, b.max_us() * kMaxCores, "cpu", "us"));
    // Run delay adds up over threads, each waiting at most the whole run.
    OMNIB_RETURN_IF_ERROR(within(c.wait_us, b.max_us() * kMaxThreads, "cpu", "us"));
  }
  for (const auto& p : s.profile)
    for (double t : {p.breakdown.barrier_us, p.breakdown.call_us})
      OMNIB_RETURN_IF_ERROR(within(t, b.max_us(), "prof", "us"));
  return Status::ok();
}

Status check_counters(const RankSamples& s, const PeerBounds& b) {
  for (const auto& [call, n] : s.wrong) {
    OMNIB_RETURN_IF_ERROR(within(static_cast<double>(call), b.max_calls(), "wrong", "calls"));
    OMNIB_RETURN_IF_ERROR(within(static_cast<double>(n), static_cast<double>(b.elements), "wrong", "elements"));
  }
  OMNIB_RETURN_IF_ERROR(within(static_cast<double>(s.calls_checked), b.max_calls(), "checked", "calls"));
  if (s.wire) {
    OMNIB_RETURN_IF_ERROR(within(static_cast<double>(s.wire->sent), b.max_bytes(), "wire", "bytes"));
    OMNIB_RETURN_IF_ERROR(within(static_cast<double>(s.wire->frames_sent), b.max_frames(), "wire", "frames"));
  }
  if (s.link_bytes) OMNIB_RETURN_IF_ERROR(within(static_cast<double>(*s.link_bytes), b.max_bytes(), "link", "bytes"));
  if (s.link_retransmits)  // a retransmitted segment carries at least one byte
    OMNIB_RETURN_IF_ERROR(within(static_cast<double>(*s.link_retransmits), b.max_bytes(), "retx", "segments"));
  OMNIB_RETURN_IF_ERROR(within(static_cast<double>(s.dropped_events), b.max_frames(), "dropped", "spans"));
  for (const auto& [route, n] : s.routes)
    OMNIB_RETURN_IF_ERROR(within(static_cast<double>(n), b.max_calls(), "routes", "calls"));
  return Status::ok();
}

Status check_sample(const ResourceSample& s, const std::string& where) {
  OMNIB_RETURN_IF_ERROR(within(static_cast<double>(s.rss_bytes), kMaxResidentBytes, where + ".rss_bytes", "bytes"));
  OMNIB_RETURN_IF_ERROR(
      within(static_cast<double>(s.peak_rss_bytes), kMaxResidentBytes, where + ".peak_rss_bytes", "bytes"));
  OMNIB_RETURN_IF_ERROR(within(static_cast<double>(s.threads), kMaxThreads, where + ".threads", "threads"));
  return within(static_cast<double>(s.fds), kMaxDescriptors, where + ".fds", "descriptors");
}

}  // namespace

PeerBounds PeerBounds::for_run(double seconds, uint64_t elements) {
  // 1% and a second of slack: another host's clock may run a little fast.
  return PeerBounds{seconds * 1.01 + 1, elements};
}

double PeerBounds::max_bytes() const { return max_seconds * kMaxBytesPerSecond; }
double PeerBounds::max_frames() const { return max_seconds * kMaxFramesPerSecond; }
double PeerBounds::max_calls() const { return max_seconds * kMaxCallsPerSecond; }

Status check_peer_samples(const RankSamples& s, const PeerBounds& b) {
  OMNIB_RETURN_IF_ERROR(check_times(s, b));
  return check_counters(s, b);
}

Status check_peer_resources(const ProcessResources& p, const PeerBounds& b) {
  OMNIB_RETURN_IF_ERROR(check_sample(p.start, "start"));
  OMNIB_RETURN_IF_ERROR(check_sample(p.end, "end"));
  OMNIB_RETURN_IF_ERROR(within(static_cast<double>(p.calls), b.max_calls(), "calls", "calls"));
  OMNIB_RETURN_IF_ERROR(within(static_cast<double>(p.rounds), b.max_calls(), "rounds", "rounds"));
  // Rank 0 fits a slope over every pair of points: a longer series is no
  // sampler's (resource_series.h) and would cost it quadratic time.
  OMNIB_RETURN_IF_ERROR(
      within(static_cast<double>(p.series.size()), static_cast<double>(kMaxSeriesPoints), "series", "points"));
  for (const ResourcePoint& point : p.series)
    OMNIB_RETURN_IF_ERROR(check_sample({point.rss_bytes, 0, point.threads, point.fds}, "series"));
  return within(p.seconds, b.max_seconds, "seconds", "s");
}

}  // namespace omnib
