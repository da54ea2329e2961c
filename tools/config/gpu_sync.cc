#include "tools/config/gpu_sync.h"

namespace omnib {

const char* gpu_sync_name(GpuSync s) { return s == GpuSync::kBlocking ? "blocking" : "spin"; }

bool parse_gpu_sync(const std::string& text, GpuSync* out) {
  for (GpuSync s : {GpuSync::kSpin, GpuSync::kBlocking})
    if (text == gpu_sync_name(s)) {
      *out = s;
      return true;
    }
  return false;
}

}  // namespace omnib
