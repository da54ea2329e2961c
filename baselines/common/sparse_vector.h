// Sparse vectors for the sparse baselines (allgather, SparCML, Ok-Topk): a
// slice [begin, end) of a tensor held either as sorted (index, value) pairs
// or densely, whichever is smaller on the wire (SparCML's switch, Renggli et
// al., SC'19). Values are elements of elem_size bytes (4: float, int32; 2:
// bf16, half) kept as raw bits; indices are absolute tensor positions, 32-bit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/base/tensor.h"

namespace omnib {

constexpr size_t kIndexBytes = sizeof(uint32_t);

// A non-owning view of a sparse or dense slice. The memory belongs to whoever
// made the view and must outlive its use.
struct VectorView {
  uint64_t begin = 0;
  uint64_t end = 0;
  bool dense = false;
  size_t elem_size = 4;               // bytes per value
  size_t pairs = 0;                   // sparse only
  const uint32_t* indices = nullptr;  // sparse only: strictly increasing, in [begin, end)
  const uint8_t* values = nullptr;    // `pairs` values, or end - begin values when dense

  uint64_t length() const { return end - begin; }
  size_t items() const { return dense ? static_cast<size_t>(length()) : pairs; }
};

// An owning sparse or dense slice.
struct SparseVector {
  uint64_t begin = 0;
  uint64_t end = 0;
  bool dense = false;
  size_t elem_size = 4;
  std::vector<uint32_t> indices;  // sparse only
  std::vector<uint8_t> values;    // elem_size bytes each

  // Empties the vector and gives it a range, a representation and an
  // element size. A dense vector is zero-filled.
  void reset(uint64_t begin, uint64_t end, bool dense, size_t elem_size);
  size_t pairs() const { return indices.size(); }
  VectorView view() const;
};

// SparCML's rule: k pairs cost k*(4+e) bytes, the dense slice length*e; keep
// the dense form as soon as it is not larger.
bool dense_is_smaller(size_t pairs, uint64_t length, size_t elem_size);

// Appends the non-zero elements of tensor[begin, end) to `out` as pairs
// (`out` is reset to that range and element size first). An element is
// non-zero when any of its bits is set, so the sum keeps every bit of every input.
void extract_pairs(const void* tensor, size_t elem_size, uint64_t begin, uint64_t end, SparseVector& out);

// The smaller representation of tensor[begin, end): a dense view into the
// tensor itself (no copy), or the pairs extracted into `scratch`.
VectorView extract_smaller(const void* tensor, uint64_t begin, uint64_t end, size_t elem_size, SparseVector& scratch);

// Like extract_smaller, but the result is owned by `out` (a dense slice is copied).
void load_smaller(const void* tensor, uint64_t begin, uint64_t end, size_t elem_size, SparseVector& out);

// base[indices[i] - base_index] += values[i]: `base` points at the element
// whose absolute index is base_index (0 for a whole tensor); `values` holds
// `pairs` elements of `dtype`.
void scatter_add(DType dtype, void* base, uint64_t base_index, const uint32_t* indices, const void* values,
                 size_t pairs);

// Adds v (elements of `dtype`) into memory that holds element base_index at `base`.
void add_view_into(DType dtype, const VectorView& v, void* base, uint64_t base_index = 0);

// Overwrites tensor[v.begin, v.end) with v (zeros where a sparse v has no pair).
void write_view(DType dtype, const VectorView& v, void* tensor);

// acc += other over the same range. The result holds the union of both index
// sets (a sum that cancels to zero keeps its pair, as in SparCML) and turns
// dense when that is not larger. `scratch` is reused between calls.
void merge_into(DType dtype, SparseVector& acc, const SparseVector& other, SparseVector& scratch);

// Turns a sparse vector into the dense form of the same slice.
void densify(DType dtype, SparseVector& v);

}  // namespace omnib
