// omni-bench: sparse allreduce engine and head-to-head benchmark.
#include <malloc.h>

#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "engine/collective.h"
#include "engine/status.h"
#include "tools/allreduce_command.h"
#include "tools/build_info.h"

int main(int argc, char** argv) {
  // Frames and tensors are large and recycled: keep them on the heap instead
  // of mapping and unmapping pages on every allocation.
  mallopt(M_MMAP_THRESHOLD, 256 << 20);

  std::vector<std::string> args(argv, argv + argc);
  CLI::App app{"omni-bench: block-sparse allreduce engine and head-to-head collective benchmark"};
  app.set_version_flag("--version", std::string("omni-bench ") + OMNIB_VERSION + " (" + OMNIB_GIT_REVISION + ")");
  app.require_subcommand(1);

  omnib::AllreduceOptions allreduce;
  auto* allreduce_cmd = app.add_subcommand("allreduce", "measure allreduce algorithms on sparse inputs");
  omnib::bind_allreduce_options(*allreduce_cmd, allreduce);

  auto* list_cmd = app.add_subcommand("list", "list the algorithms this build knows");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    // CLI11 returns 0 for --help/--version; every real parse error is a usage error.
    return code == 0 ? 0 : omnib::exit_code(omnib::Code::kUsage);
  }

  if (*list_cmd) {
    for (const auto& name : omnib::CollectiveRegistry::instance().names()) {
      const auto* info = omnib::CollectiveRegistry::instance().find(name);
      std::printf("%-22s %s\n", name.c_str(), info->summary.c_str());
    }
    return 0;
  }
  if (*allreduce_cmd) return omnib::run_allreduce_command(allreduce, args);
  return omnib::exit_code(omnib::Code::kUsage);
}
