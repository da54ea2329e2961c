#include "engine/bootstrap/store.h"

namespace omnib {

Status store_barrier(Store& store, const std::string& name, int world) {
  auto arrived = store.add("barrier/" + name, 1);
  if (!arrived.is_ok()) return arrived.status();
  // The last rank to arrive opens the gate; the others wait for it.
  if (arrived.value() == world) return store.set("barrier/" + name + "/open", "1");
  auto open = store.get("barrier/" + name + "/open");
  return open.status().with_context(open.is_ok() ? "" : "barrier '" + name + "': ");
}

namespace {

Result<std::vector<std::string>> gather(Store& store, const std::string& name, int rank, int world,
                                        const std::string& mine, bool everyone_reads) {
  OMNIB_RETURN_IF_ERROR(store.set("gather/" + name + "/" + std::to_string(rank), mine));
  if (!everyone_reads && rank != 0) return std::vector<std::string>{};
  std::vector<std::string> all(static_cast<size_t>(world));
  for (int r = 0; r < world; ++r) {
    auto v = store.get("gather/" + name + "/" + std::to_string(r));
    if (!v.is_ok()) return v.status().with_context("gathering '" + name + "' from rank " + std::to_string(r) + ": ");
    all[static_cast<size_t>(r)] = v.take();
  }
  return all;
}

}  // namespace

Result<std::vector<std::string>> store_all_gather(Store& store, const std::string& name, int rank, int world,
                                                  const std::string& mine) {
  return gather(store, name, rank, world, mine, true);
}

Result<std::vector<std::string>> store_gather_to_root(Store& store, const std::string& name, int rank, int world,
                                                      const std::string& mine) {
  return gather(store, name, rank, world, mine, false);
}

}  // namespace omnib
