// omni-bench with the sabotage algorithms (tests/sabotage/sabotage_collectives.h).
#include <cstdio>

#include "tests/sabotage/sabotage_collectives.h"
#include "tools/cli/cli_main.h"

int main(int argc, char** argv) {
  omnib::Status s = omnib::sabotage::install();
  if (!s.is_ok()) {
    std::fprintf(stderr, "omni-bench-sabotage: %s\n", s.message().c_str());
    return omnib::exit_code(s.code());
  }
  return omnib::run_omni_bench(argc, argv);
}
