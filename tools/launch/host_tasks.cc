#include "tools/launch/host_tasks.h"

#include <charconv>
#include <cstdint>
#include <cstdlib>

namespace omnib {
namespace {

constexpr int kMaxTasks = 1 << 20;

// A whole number in [min, kMaxTasks] filling `text`.
std::optional<int> number(std::string_view text, int min = 1) {
  int n = 0;
  auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (err != std::errc() || end != text.data() + text.size() || n < min || n > kMaxTasks) return std::nullopt;
  return n;
}

std::optional<int> env_number(const char* name, int min = 1) {
  const char* v = std::getenv(name);
  return v ? number(v, min) : std::nullopt;
}

}  // namespace

std::optional<int> slurm_tasks_on_node(const std::string& tasks_per_node, int node) {
  std::string_view rest = tasks_per_node;
  int64_t first = 0;  // the first node the next item covers (64 bits: a long list cannot overflow it)
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    int repeat = 1;
    if (const size_t open = item.find("(x"); open != std::string_view::npos) {
      if (item.back() != ')') return std::nullopt;
      auto r = number(item.substr(open + 2, item.size() - open - 3));
      if (!r) return std::nullopt;
      repeat = *r;
      item = item.substr(0, open);
    }
    auto tasks = number(item);
    if (!tasks) return std::nullopt;
    if (node < first + repeat) return node >= first ? tasks : std::nullopt;
    first += repeat;
  }
  return std::nullopt;
}

std::optional<int> host_tasks_from_env(const std::string& launcher) {
  std::optional<int> n;
  if (launcher == "mpirun") n = env_number("OMPI_COMM_WORLD_LOCAL_SIZE");
  if (launcher == "mpich") n = env_number("MPI_LOCALNRANKS");
  if (launcher == "slurm") {
    const char* list = std::getenv("SLURM_TASKS_PER_NODE");
    const auto node = env_number("SLURM_NODEID", 0);
    if (list && node) n = slurm_tasks_on_node(list, *node);
  }
  return n ? n : env_number("LOCAL_WORLD_SIZE");
}

}  // namespace omnib
