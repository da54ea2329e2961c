// What a run's inputs look like over every rank: the densities (fractions
// of blocks or elements that are non-zero) that the cost models estimate
// bytes from and the records report.
#pragma once

namespace omnib {

struct InputStats {
  double element_density = 0;      // largest over ranks
  double block_density = 0;        // largest over ranks
  double mean_block_density = 0;   // mean over ranks
  double union_block_density = 0;  // blocks non-zero on at least one rank
  double union_element_density = 0;
};

}  // namespace omnib
