// Whether a run's processes grew, judged size by size from each process's
// holdings after its timed rounds (one call of each algorithm):
//   - resident memory by its trend over the later half of the rounds, a
//     slope with a 99.9% interval (trend_slope.h), never a difference of two
//     samples: a shrink is never growth, settling in the first calls or a
//     step the allocator takes once is no trend;
//   - threads and descriptors by their count at the end of the size against
//     the count after its first timed round (what that round starts is the
//     collectives' own, not growth);
//   - never across sizes: a new size's buffers are not growth.
// Three outcomes: flat, grew (with the slope per call, what it adds up to
// over the size, and whose), or too short to tell a slope from noise.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tools/measure/process_resources.h"
#include "tools/measure/trend_slope.h"

namespace omnib {

enum class ResourceVerdict { kFlat, kGrew, kTooShort };
// "flat", "grew", "too_short": the JSON's words.
const char* resource_verdict_name(ResourceVerdict v);
std::optional<ResourceVerdict> resource_verdict_from_name(const std::string& name);

// Resident memory is judged by its trend over the later half of a size's
// timed rounds: over the first half it settles (the allocator's heap and
// the collectives' buffers reach their working set: under mpirun, 4 ranks at
// 4 MiB rose by about 2 MB over their first 10 to 15 calls after warm-up,
// then held still for 300), while a leak goes on and shows in any half.
// That half needs kMinRssPoints points: Sen's 99.9% interval has no lower
// end at all below 9 points (it would need a pairwise slope below the
// smallest), and at 10 its lower end is the 4th smallest of 45 pairwise
// slopes, the fewest at which a steady rise of a page or more per call
// clears it with three pairs to spare, so that a noisy pair can neither
// make a trend nor hide one. Smaller leaks need more rounds, which the
// interval accounts for by itself (1 KiB per call, a page every fourth
// call, clears it from about 18 points: 36 rounds).
inline constexpr uint64_t kMinRssPoints = 10;
// The fewest timed rounds a size needs to be judged at all: a later half of
// kMinRssPoints.
inline constexpr uint64_t kMinRoundsToJudge = 2 * kMinRssPoints;

// Below this slope (bytes per round) a trend is not called growth, however
// sure: the harness itself keeps each timed call's time until its size ends
// (8 bytes per call of each algorithm in a -n run: 120 bytes a round with
// all 15 algorithms), and rank 0's --duration tallies keep 8 bytes per call
// of each algorithm until they hold 10,000. The store's leak of about 260
// bytes per call (docs/soak.md) stays well above it.
inline constexpr double kMinRssSlope = 128;

// --trace keeps every traced call's spans until its size ends: the rounds
// of a size whose spans stay in memory (kAllRoundsTraced: every round).
inline constexpr uint64_t kAllRoundsTraced = UINT64_MAX;

// What one size's processes held, as rank 0 has them.
struct SizeResources {
  uint64_t size_bytes = 0;
  std::vector<ProcessResources> processes;
  // The first `traced_rounds` rounds' spans stay in memory (--trace): the
  // memory trend is fitted to the points after them only. 0: no --trace.
  uint64_t traced_rounds = 0;
};

// One process's resident memory over a size's rounds.
struct RssTrend {
  std::string role;
  int rank = -1;
  TrendSlope fit;       // bytes per round
  uint64_t rounds = 0;  // the process's timed rounds: fit.slope * rounds is what it adds up to
};

// Threads or descriptors: the largest change of any process from after its
// first timed round to the end of the size.
struct CountChange {
  std::string role;
  int rank = -1;
  int64_t change = 0;
};

struct SizeVerdict {
  uint64_t size_bytes = 0;
  uint64_t rounds = 0;  // the fewest timed rounds of any process
  ResourceVerdict verdict = ResourceVerdict::kTooShort;
  std::optional<RssTrend> rss;  // the steepest process's; none when too short or not judged
  std::string rss_not_judged;   // why resident memory was left out, when it was
  CountChange threads, fds;
  // One phrase per role and resource that grew: "worker rss +1.02 kB per
  // call over 60 calls (+61.44 kB; rank 2, size 64M)", "aggregator fds +3
  // over 60 calls (rank 9, size 4K)".
  std::vector<std::string> grew;
};

struct ResourcesVerdict {
  ResourceVerdict verdict = ResourceVerdict::kTooShort;  // grew if any size grew, else flat if any size was judged
  std::vector<SizeVerdict> sizes;
  std::vector<std::string> grew;  // every size's phrases, in order
};

SizeVerdict judge_size(const SizeResources& size);
ResourcesVerdict judge_run(const std::vector<SizeResources>& sizes);
// The run's verdict from sizes already judged (as a file holds them).
ResourcesVerdict combine_sizes(std::vector<SizeVerdict> sizes);

// The table's footer line, without "# resources: " or the newline:
// "flat over 40 calls in 2 sizes (...)", "GREW: ...", "too short to judge
// (3 calls per size; 20 needed)".
std::string verdict_line(const ResourcesVerdict& v);

}  // namespace omnib
