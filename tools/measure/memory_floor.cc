#include "tools/measure/memory_floor.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <ctime>
#include <thread>

#include "engine/blocks/block_layout.h"
#include "engine/blocks/block_scan.h"

namespace omnib {
namespace {

std::atomic<double> pass_scale{1.0};

// One thread's piece: the scan of its blocks of the input, then the memset
// of the same elements of the output. Returns the blocks found non-zero.
size_t piece_pass(const void* in, void* out, size_t elem_size, const BlockLayout& layout, BlockRange range) {
  std::vector<uint64_t> found;
  find_nonzero_blocks(in, elem_size, layout, range, found);
  const size_t begin = layout.block_begin(range.begin) * elem_size;
  if (out) std::memset(static_cast<char*>(out) + begin, 0, layout.elements_in(range) * elem_size);
  return found.size();
}

double thread_cpu_us() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) / 1e3;
}

struct Piece {
  size_t found = 0;
  double cpu_us = 0;
};

Piece timed_piece(const void* in, void* out, size_t elem_size, const BlockLayout& layout, BlockRange range) {
  const double before = thread_cpu_us();
  const size_t found = piece_pass(in, out, elem_size, layout, range);
  return {found, thread_cpu_us() - before};
}

}  // namespace

int floor_threads_per_rank(int ranks, int cores) { return std::max(1, cores / std::max(1, ranks)); }

Result<PassTime> time_floor_pass(const void* in, void* out, uint64_t bytes, size_t elem_size, int threads) {
  if (elem_size != 2 && elem_size != 4) return internal_error("memory floor: elements of 2 or 4 bytes only");
  const BlockLayout layout(bytes / elem_size, kFloorBlockElements);
  const int pieces = static_cast<int>(std::clamp<uint64_t>(layout.num_blocks(), 1, std::max(1, threads)));
  std::vector<Piece> done(static_cast<size_t>(pieces));
  std::vector<std::thread> helpers;
  const auto start = std::chrono::steady_clock::now();
  // This thread takes piece 0 once the others are started.
  for (int t = 1; t < pieces; ++t)
    helpers.emplace_back([&, t] { done[t] = timed_piece(in, out, elem_size, layout, layout.shard_range(t, pieces)); });
  done[0] = timed_piece(in, out, elem_size, layout, layout.shard_range(0, pieces));
  for (auto& h : helpers) h.join();
  const double scale = pass_scale.load(std::memory_order_relaxed);
  PassTime time;
  time.wall_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() * scale;
  for (const Piece& p : done) {
    if (p.found > 0) return internal_error("memory floor: the input to scan was not all zeros");
    time.busiest_us = std::max(time.busiest_us, p.cpu_us * scale);
    time.cpu_us += p.cpu_us * scale;
  }
  return time;
}

double host_floor_us(const std::vector<std::vector<PassTime>>& times, int cpus) {
  size_t reps = 0;
  for (const auto& worker : times) reps = std::max(reps, worker.size());
  std::vector<double> busiest(reps, 0.0), total(reps, 0.0);
  for (const auto& worker : times) {
    for (size_t rep = 0; rep < worker.size(); ++rep) {
      busiest[rep] = std::max(busiest[rep], worker[rep].busiest_us);
      total[rep] += worker[rep].cpu_us;
    }
  }
  double floor = 0;
  for (size_t rep = 0; rep < busiest.size(); ++rep) {
    const double least = std::max(busiest[rep], total[rep] / std::max(1, cpus));
    floor = rep == 0 ? least : std::min(floor, least);
  }
  return floor;
}

void scale_floor_passes(double factor) { pass_scale.store(factor, std::memory_order_relaxed); }

}  // namespace omnib
