#include "tools/allreduce/threshold_check.h"

#include <algorithm>
#include <cmath>

namespace omnib {
namespace {

std::string row_name(const ResultRecord& r) { return r.config.label() + " " + r.algo; }

}  // namespace

void bind_threshold_options(CLI::App& cmd, ThresholdOptions& t) {
  cmd.add_option("--min-busbw", t.min_busbw_GBps, "health check: exit 5 if any result's busbw (GB/s) is below this")
      ->group("Thresholds (exit 5 when missed)");
  cmd.add_option("--min-speedup", t.min_speedup,
                 "health check: exit 5 if omni's speedup over any other algorithm is below this")
      ->group("Thresholds (exit 5 when missed)");
}

Status validate_threshold_options(const ThresholdOptions& t, const std::vector<std::string>& algos) {
  // NaN fails every comparison: a check written as `< 0` would pass it and
  // then check nothing.
  if (!(t.min_busbw_GBps >= 0 && std::isfinite(t.min_busbw_GBps)))
    return usage_error("--min-busbw must be a positive number (GB/s, 1e9 bytes per second)");
  if (!(t.min_speedup >= 0 && std::isfinite(t.min_speedup)))
    return usage_error("--min-speedup must be a positive number (e.g. 2 for twice as fast)");
  if (t.min_speedup > 0) {
    const bool has_subject = std::find(algos.begin(), algos.end(), kThresholdSubject) != algos.end();
    if (!has_subject || algos.size() < 2)
      return usage_error(std::string("--min-speedup checks the speedup of ") + kThresholdSubject +
                         " over the other algorithms: list it and at least one other in --algo (e.g. --algo omni,ps)");
  }
  return Status::ok();
}

void ThresholdCheck::add_group(const std::vector<ResultRecord>& group) {
  if (!t_.any()) return;
  char buf[256];
  for (const auto& r : group) {
    if (r.skipped) continue;
    if (t_.min_busbw_GBps > 0) {
      ++rows_checked_;
      if (r.busbw_GBps < t_.min_busbw_GBps) {
        std::snprintf(buf, sizeof(buf), "%s: busbw %.3f GB/s < --min-busbw %g", row_name(r).c_str(), r.busbw_GBps,
                      t_.min_busbw_GBps);
        misses_.push_back(buf);
      }
    }
  }
  if (t_.min_speedup <= 0) return;
  const auto subject =
      std::find_if(group.begin(), group.end(), [](const ResultRecord& r) { return r.algo == kThresholdSubject; });
  if (subject == group.end()) return;
  ++rows_checked_;
  // A health check must not pass on nothing: no comparison counts as a miss.
  if (subject->skipped) {
    misses_.push_back(row_name(*subject) + ": skipped (" + subject->skip_reason +
                      "), so --min-speedup cannot be checked");
    return;
  }
  if (subject->speedup_vs.empty()) {
    misses_.push_back(row_name(*subject) + ": no other algorithm ran, so --min-speedup cannot be checked");
    return;
  }
  for (const auto& [other, speedup] : subject->speedup_vs) {
    if (speedup < t_.min_speedup) {
      std::snprintf(buf, sizeof(buf), "%s: speedup vs %s %.3fx < --min-speedup %g", row_name(*subject).c_str(),
                    other.c_str(), speedup, t_.min_speedup);
      misses_.push_back(buf);
    }
  }
}

int ThresholdCheck::report(std::FILE* out) const {
  if (!t_.any()) return 0;
  if (misses_.empty()) {
    std::fprintf(out, "# Thresholds           : met by all %zu checked rows\n", rows_checked_);
    std::fflush(out);
    return 0;
  }
  std::fprintf(out, "# Thresholds           : %zu missed\n", misses_.size());
  for (const auto& m : misses_) std::fprintf(out, "#   missed: %s\n", m.c_str());
  std::fflush(out);
  std::fprintf(stderr, "omni-bench: %zu result%s missed --min-busbw/--min-speedup (listed after the table): exit 5\n",
               misses_.size(), misses_.size() == 1 ? "" : "s");
  return exit_code(Code::kRegression);
}

}  // namespace omnib
