// What the baselines that bring their own transport (gloo-*, nccl*) share:
// their transport keeps its bytes to itself, so they report none and the
// report points at the model column instead.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "engine/collective/collective.h"

namespace omnib {

class ForeignWireCollective : public Collective {
 public:
  std::optional<ByteCounters> wire_counters() const final { return std::nullopt; }
  std::string wire_note() const final { return transport_ + " does not expose byte counters; see the model column"; }

 protected:
  // `transport`: what moves the bytes, as the note names it ("NCCL").
  explicit ForeignWireCollective(std::string transport) : transport_(std::move(transport)) {}

 private:
  std::string transport_;
};

}  // namespace omnib
