// Wall-clock lengths of options such as --duration and --checkpoint-interval:
// a number and a unit, as --link-delay is written: ms, s, m, h (msec, sec,
// min, hour also), e.g. 500ms, 30s, 10m, 2h, 1.5h, or several of them in a
// row (1h30m, 1m1.5s: added up). A bare number is refused (seconds or
// minutes? the unit says).
#pragma once

#include <chrono>
#include <string>

#include "engine/base/status.h"

namespace omnib {

// Usage error naming `flag` when `text` is not such a length or lies outside
// [min, max].
Result<std::chrono::milliseconds> parse_time_span(const std::string& flag, const std::string& text,
                                                  std::chrono::milliseconds min, std::chrono::milliseconds max);

// The shortest exact form, which parse_time_span reads back: 7200000 -> "2h",
// 90000 -> "1m30s", 1500 -> "1.5s", 500 -> "500ms".
std::string format_time_span(std::chrono::milliseconds span);

}  // namespace omnib
