#include "engine/store/store.h"

#include <algorithm>

namespace omnib {

Status store_barrier(Store& store, const std::string& name, int world) { return store.barrier(name, world); }

Result<std::vector<std::string>> store_all_gather(Store& store, const std::string& name, int rank, int world,
                                                  const std::string& mine) {
  return store.gather(name, rank, world, mine, GatherTo::kEveryone);
}

Result<std::vector<std::string>> store_gather_to_root(Store& store, const std::string& name, int rank, int world,
                                                      const std::string& mine) {
  return store.gather(name, rank, world, mine, GatherTo::kRoot);
}

Result<double> measure_barrier_latency_us(Store& store, const std::string& name, int world, int rounds) {
  if (rounds < 1) return internal_error("measure_barrier_latency_us needs at least one round");
  std::vector<double> times;
  for (int i = 0; i < rounds; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    OMNIB_RETURN_IF_ERROR(store.barrier(name + "/" + std::to_string(i), world));
    times.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(times.begin(), times.end());
  const size_t n = times.size();
  return n % 2 ? times[n / 2] : (times[n / 2 - 1] + times[n / 2]) / 2;
}

}  // namespace omnib
