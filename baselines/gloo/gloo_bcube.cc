// Registers gloo::AllreduceBcube as "gloo-bcube".
#include <gloo/allreduce_bcube.h>
#include <gloo/barrier_all_to_all.h>

#include "baselines/gloo/gloo_collective.h"

namespace omnib {
namespace {

// With more than one step, Gloo's bcube returns once its step-0 peers have
// confirmed receipt, while its earlier allgather sends to peers of later
// steps may still be leaving the buffer: a caller that refills the buffer at
// once (in place) corrupts what those peers receive. A barrier after it
// returns only when every rank has received everything.
template <typename T>
class BcubeThenBarrier final : public gloo::Algorithm {
 public:
  BcubeThenBarrier(const std::shared_ptr<gloo::Context>& context, const std::vector<T*>& ptrs, int count)
      : gloo::Algorithm(context), bcube_(context, ptrs, count) {
    if (gloo_bcube_needs_barrier(context->size)) barrier_ = std::make_unique<gloo::BarrierAllToAll>(context);
  }

  void run() override {
    bcube_.run();
    if (barrier_) barrier_->run();
  }

 private:
  gloo::AllreduceBcube<T> bcube_;
  std::unique_ptr<gloo::BarrierAllToAll> barrier_;
};

const CollectiveRegistration kRegistration(gloo_collective_info<BcubeThenBarrier>(GlooAlgorithm::kBcube));

}  // namespace
}  // namespace omnib
