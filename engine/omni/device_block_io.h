// Where the omni engine gets its block IO for tensors in GPU memory: the CUDA
// kernels' implementation when the build has them. The engine asks for it
// itself, so the collective seam stays free of the engine's IO seam.
#pragma once

#include "engine/omni/worker_block_io.h"

namespace omnib {

// Null in a build without the CUDA kernels.
WorkerBlockIoFactory device_block_io_factory();

}  // namespace omnib
