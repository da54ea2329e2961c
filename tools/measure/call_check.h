// The check every call of every algorithm passes: before the call its output
// is poisoned with a pattern no correct result can hold, after it every
// element is compared bit for bit with the reference sum. An algorithm that
// writes nothing, leaves a gap, or returns last call's answer is caught.
#pragma once

#include <cstdint>

#include "engine/base/tensor.h"

namespace omnib {

// The byte the output is filled with before a call: 0xFF makes every float a
// NaN (0xFFFFFFFF), and every bf16 and half a NaN too (0xFFFF: sign set,
// exponent all ones, mantissa non-zero in both formats); no sum of the
// harness's finite inputs is one. 0x7F makes every int32 2139062143, far
// above any sum of the harness's small values (|v| <= 8 per rank, at most
// 1024 ranks).
uint8_t poison_byte(DType dtype);

// Fills a host tensor with poison_byte (device tensors: DeviceTensors::fill).
void poison(const TensorView& host);

// Elements of `out` whose bits differ from `reference` (so -0.0 is not +0.0
// and a NaN is wrong even where the reference holds one). Elements are
// compared whole, at the dtype's size.
uint64_t count_wrong(const TensorView& out, const TensorView& reference);

}  // namespace omnib
