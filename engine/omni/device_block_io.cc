#include "engine/omni/device_block_io.h"

#ifdef OMNIB_HAVE_CUDA_KERNELS
#include "engine/omni/cuda_block_io.h"
#endif

namespace omnib {

#ifdef OMNIB_HAVE_CUDA_KERNELS
WorkerBlockIoFactory device_block_io_factory() { return gpu::CudaBlockIo::create; }
#else
WorkerBlockIoFactory device_block_io_factory() { return nullptr; }
#endif

}  // namespace omnib
