// `omni-bench list`: every algorithm this build knows, its family (sparse
// or dense), whether `allreduce` runs it by default with host and with
// device tensors, and whether it can run here at all (with the reason when
// it cannot, as `allreduce` would say it).
#pragma once

namespace omnib {

int list_algorithms();

}  // namespace omnib
