// Wire bytes of sparse streams (baselines/sparse_stream.h), for the analytic
// cost models of the sparse baselines. Fractional item counts are fine: the
// models feed in expected values.
#pragma once

#include <cstddef>

namespace omnib {

// One stream of `items` items, each `item_bytes` on the wire, split into
// frames of `per_frame` items: every frame adds a 32-byte frame header and a
// 16-byte chunk header, and a stream has at least one frame.
double stream_wire_bytes(double items, double item_bytes, double per_frame);

// A stream of `pairs` (index, value) pairs.
double sparse_stream_bytes(double pairs, size_t elem_size);

// A slice of `length` elements with `pairs` non-zeros, sent in whichever form
// SparCML's rule picks (dense_is_smaller).
double smaller_stream_bytes(double pairs, double length, size_t elem_size);

}  // namespace omnib
