#include "tools/sweep/progress_bar.h"

#include <unistd.h>

#include <cstdio>

namespace omnib {

bool stderr_is_terminal() { return isatty(STDERR_FILENO) == 1; }

ProgressBar::ProgressBar(size_t total, bool enabled)
    : total_(total), enabled_(enabled), start_(std::chrono::steady_clock::now()) {}

std::string ProgressBar::format_duration(double s) {
  char buf[32];
  auto secs = static_cast<long>(s + 0.5);
  if (secs >= 3600)
    std::snprintf(buf, sizeof(buf), "%ldh%02ldm", secs / 3600, (secs % 3600) / 60);
  else if (secs >= 60)
    std::snprintf(buf, sizeof(buf), "%ldm%02lds", secs / 60, secs % 60);
  else
    std::snprintf(buf, sizeof(buf), "%lds", secs);
  return buf;
}

std::string ProgressBar::render(size_t done, size_t total, double elapsed_s, const std::string& label, size_t width) {
  const double frac = total ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
  const auto filled = static_cast<size_t>(frac * static_cast<double>(width));
  std::string bar(filled, '#');
  bar += std::string(width - filled, '.');
  std::string eta = "?";
  if (done > 0) eta = format_duration(elapsed_s / static_cast<double>(done) * static_cast<double>(total - done));
  return "[" + bar + "] " + std::to_string(done) + "/" + std::to_string(total) + "  elapsed " +
         format_duration(elapsed_s) + "  left " + eta + "  " + label;
}

void ProgressBar::update(size_t done, const std::string& label) {
  if (!enabled_) return;
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::fprintf(stderr, "\r\033[K%s", render(done, total_, elapsed, label, 30).c_str());
  std::fflush(stderr);
}

void ProgressBar::clear() {
  if (!enabled_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
}

}  // namespace omnib
