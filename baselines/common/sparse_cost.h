// Wire bytes of sparse streams (baselines/common/sparse_stream.h), for the analytic
// cost models of the sparse baselines. Fractional item counts are fine: the
// estimated models feed in expected values; the exact ones feed in the
// counts of the inputs' actual non-zeros (engine/blocks/input_support.h).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "baselines/common/even_partition.h"
#include "engine/collective/collective.h"

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

// c.support when it describes c's inputs (same ranks and count), else null:
// then a model estimates from the densities.
const InputSupport* exact_support(const CostInputs& c);

// The per-rank maximum and the total of `sent` (bytes each rank sends).
WireCost wire_cost_of(std::span<const double> sent, bool exact);

// Every rank sends each of its n-1 peers `per_peer` bytes (an estimate).
WireCost all_peers_cost(int n, double per_peer);

// Estimated from the densities: what a rank sends each peer in a reduce to
// region owners and an allgather of the reduced regions (see below), when
// the regions are count/n elements long: its part of the peer's region
// (the element density) and its reduced region (the union density).
struct OwnerExchangeEstimate {
  double upload = 0;
  double download = 0;
};
OwnerExchangeEstimate owner_exchange_estimate(const CostInputs& c);

// Adds to sent[r] the bytes of a reduce to region owners followed by an
// allgather of the reduced regions (sparcml-split, oktopk): rank r sends
// the owner of region j != r its non-zeros in region j, and each owner sends
// its region of the sum to every other rank, both in the smaller form.
// The owner re-extracts the complete sum, whose non-zeros are the
// reference's (docs/algorithms.md, "How close the models are").
void add_owner_exchange_bytes(const InputSupport& support, std::span<const Slice> regions, size_t elem_size,
                              std::vector<double>& sent);

}  // namespace omnib
