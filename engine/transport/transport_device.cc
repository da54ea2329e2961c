#include "engine/transport/transport_device.h"

#include <cstdio>

namespace omnib {

void note_rejection(int rank, uint64_t& count, const std::string& what) {
  if (count++ == 0)
    std::fprintf(stderr, "omni-bench: rank %d: %s; still waiting for its peers (later such connections are counted, "
                 "not shown)\n", rank, what.c_str());
}

}  // namespace omnib
