// omni-bench: sparse allreduce engine and head-to-head benchmark.
#include "tools/cli/cli_main.h"

int main(int argc, char** argv) { return omnib::run_omni_bench(argc, argv); }
