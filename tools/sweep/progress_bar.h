// A one-line progress bar on stderr: done/total, elapsed, estimated time left.
// It draws only when stderr is a terminal, so logs and CI output stay clean.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace omnib {

class ProgressBar {
 public:
  ProgressBar(size_t total, bool enabled);
  // Redraws with `done` units finished and a label for the current step.
  void update(size_t done, const std::string& label);
  // Clears the line (call before other output and at the end).
  void clear();

  // "1h02m", "3m05s", "12s".
  static std::string format_duration(double seconds);
  // The line update() would draw, for a given elapsed time (testable).
  static std::string render(size_t done, size_t total, double elapsed_s, const std::string& label, size_t width);

 private:
  size_t total_;
  bool enabled_;
  std::chrono::steady_clock::time_point start_;
};

// True when stderr is a terminal.
bool stderr_is_terminal();

}  // namespace omnib
