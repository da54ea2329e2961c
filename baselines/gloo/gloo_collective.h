// The Collective every Gloo baseline is: one Gloo context over the worker
// ranks and one Gloo algorithm object, rebuilt whenever the buffer changes.
// Each algorithm's file only says which Gloo class to build
// (gloo_collective_info<gloo::AllreduceRing>(GlooAlgorithm::kRing)).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gloo/algorithm.h>
#include <gloo/context.h>
#include <gloo/types.h>

#include "baselines/common/foreign_wire_collective.h"
#include "baselines/gloo/gloo_catalog.h"
#include "baselines/gloo/gloo_context.h"
#include "baselines/gloo/gloo_cost_model.h"
#include "engine/collective/collective.h"

namespace omnib {

// Builds the Gloo algorithm that sums `count` elements of `dtype` at `data`
// across the context, in place. Gloo binds pointer and count for the
// object's life and hands out transport slots in construction order, so
// every worker must build its objects in the same order.
using GlooAlgorithmFactory = std::function<std::unique_ptr<gloo::Algorithm>(
    const std::shared_ptr<gloo::Context>& context, void* data, int count, DType dtype)>;

class GlooCollective final : public ForeignWireCollective {
 public:
  // On worker ranks, connects a fresh Gloo context (blocks until every
  // worker does the same); dedicated aggregator ranks get an idle object.
  static Result<std::unique_ptr<Collective>> create(const CollectiveSetup& setup, GlooAlgorithm which,
                                                    GlooAlgorithmFactory factory);
  ~GlooCollective() override;

  // Out of place, copies in -> out, then Gloo reduces out in place. The
  // Gloo object is cached for (out.data, count, dtype) and rebuilt when any
  // of them changes: all workers must change them at the same call, which
  // the harness does (every rank's buffers live for the whole run).
  Status allreduce(const TensorView& in, const TensorView& out) override;

  std::string run_note() const override;

 private:
  GlooCollective(const CollectiveSetup& setup, GlooAlgorithm which, GlooAlgorithmFactory factory,
                 std::shared_ptr<gloo::Context> context, int base, GlooTransport transport);
  Status bind(const TensorView& out);

  JobLayout job_;
  GlooTransport transport_;
  GlooAlgorithm which_;
  GlooAlgorithmFactory factory_;
  std::shared_ptr<gloo::Context> context_;  // null on aggregator ranks
  int base_;
  std::string bind_host_;
  std::unique_ptr<gloo::Algorithm> algorithm_;
  void* bound_data_ = nullptr;
  size_t bound_count_ = 0;
  DType bound_dtype_ = DType::kFloat32;
  bool copied_in_ = false;  // the last call was out of place
};

// Gloo runs on host memory only (the packaged Gloo has no CUDA), and has no
// bfloat16 type (gloo/types.h defines float16 only).
std::optional<std::string> gloo_unavailable_reason(const CollectiveSetup& setup);

// The CollectiveInfo of one Gloo algorithm class template (AllreduceRing, ...).
template <template <typename> class GlooAllreduce>
CollectiveInfo gloo_collective_info(GlooAlgorithm which) {
  GlooAlgorithmFactory factory = [](const std::shared_ptr<gloo::Context>& context, void* data, int count,
                                    DType dtype) -> std::unique_ptr<gloo::Algorithm> {
    switch (dtype) {
      case DType::kFloat32:
        return std::make_unique<GlooAllreduce<float>>(context, std::vector<float*>{static_cast<float*>(data)}, count);
      case DType::kInt32:
        return std::make_unique<GlooAllreduce<int32_t>>(context, std::vector<int32_t*>{static_cast<int32_t*>(data)},
                                                        count);
      case DType::kFloat16:
        // gloo::float16 sums each pair in fp32 and rounds back (gloo/math.h).
        return std::make_unique<GlooAllreduce<gloo::float16>>(
            context, std::vector<gloo::float16*>{static_cast<gloo::float16*>(data)}, count);
      case DType::kBFloat16:
        return nullptr;  // gloo_unavailable_reason keeps it from getting here
    }
    return nullptr;
  };
  return CollectiveInfo{
      gloo_algorithm_name(which),
      gloo_algorithm_summary(which),
      false,
      gloo_unavailable_reason,
      [which, factory](const CollectiveSetup& s) { return GlooCollective::create(s, which, factory); },
      [which](const CostInputs& c) { return gloo_analytic_cost(which, c); },
  };
}

}  // namespace omnib
