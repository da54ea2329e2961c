#include "baselines/common/sparse_vector.h"

#include <cstring>
#include <utility>

#include "engine/blocks/reduce_ops.h"

namespace omnib {
namespace {

void append_value(std::vector<uint8_t>& values, const void* value, size_t elem_size) {
  const size_t at = values.size();
  values.resize(at + elem_size);
  std::memcpy(values.data() + at, value, elem_size);
}

// extract_pairs over elements read as words of type W (the element's size).
template <typename W>
void extract_words(const W* words, uint64_t begin, uint64_t end, SparseVector& out) {
  auto take = [&](uint64_t from, uint64_t to) {
    for (uint64_t i = from; i < to; ++i) {
      if (words[i] == 0) continue;
      out.indices.push_back(static_cast<uint32_t>(i));
      append_value(out.values, &words[i], sizeof(W));
    }
  };
  // Sparse inputs are mostly zero runs: test a group with one wide OR (it
  // vectorizes) and look at single elements only in groups that hold a value.
  constexpr uint64_t kGroup = 16;
  uint64_t i = begin;
  for (; i + kGroup <= end; i += kGroup) {
    W any = 0;
    for (uint64_t j = 0; j < kGroup; ++j) any |= words[i + j];
    if (any != 0) take(i, i + kGroup);
  }
  take(i, end);
}

// base[indices[i] - base_index] = add(base[...], values[i]) over elements of type T.
template <typename T, typename Add>
void scatter_typed(uint8_t* base, uint64_t base_index, const uint32_t* indices, const uint8_t* values, size_t pairs,
                   Add add) {
  auto* t = reinterpret_cast<T*>(base);
  for (size_t i = 0; i < pairs; ++i) {
    T x;
    std::memcpy(&x, values + i * sizeof(T), sizeof(T));
    T& dst = t[indices[i] - base_index];
    dst = add(dst, x);
  }
}

}  // namespace

void SparseVector::reset(uint64_t b, uint64_t e, bool as_dense, size_t element_size) {
  begin = b;
  end = e;
  dense = as_dense;
  elem_size = element_size;
  indices.clear();
  values.clear();
  if (dense) values.assign(static_cast<size_t>(e - b) * elem_size, 0);
}

VectorView SparseVector::view() const {
  VectorView v;
  v.begin = begin;
  v.end = end;
  v.dense = dense;
  v.elem_size = elem_size;
  v.pairs = dense ? 0 : indices.size();
  v.indices = dense ? nullptr : indices.data();
  v.values = values.data();
  return v;
}

bool dense_is_smaller(size_t pairs, uint64_t length, size_t elem_size) {
  return static_cast<double>(pairs) * static_cast<double>(kIndexBytes + elem_size) >=
         static_cast<double>(length) * static_cast<double>(elem_size);
}

void extract_pairs(const void* tensor, size_t elem_size, uint64_t begin, uint64_t end, SparseVector& out) {
  out.reset(begin, end, false, elem_size);
  if (elem_size == 2)
    extract_words(static_cast<const uint16_t*>(tensor), begin, end, out);
  else
    extract_words(static_cast<const uint32_t*>(tensor), begin, end, out);
}

VectorView extract_smaller(const void* tensor, uint64_t begin, uint64_t end, size_t elem_size, SparseVector& scratch) {
  extract_pairs(tensor, elem_size, begin, end, scratch);
  if (!dense_is_smaller(scratch.pairs(), end - begin, elem_size)) return scratch.view();
  VectorView v;
  v.begin = begin;
  v.end = end;
  v.dense = true;
  v.elem_size = elem_size;
  v.values = static_cast<const uint8_t*>(tensor) + begin * elem_size;
  return v;
}

void load_smaller(const void* tensor, uint64_t begin, uint64_t end, size_t elem_size, SparseVector& out) {
  extract_pairs(tensor, elem_size, begin, end, out);
  if (!dense_is_smaller(out.pairs(), end - begin, elem_size)) return;
  const auto* bytes = static_cast<const uint8_t*>(tensor);
  out.indices.clear();
  out.dense = true;
  out.values.assign(bytes + begin * elem_size, bytes + end * elem_size);
}

void scatter_add(DType dtype, void* base, uint64_t base_index, const uint32_t* indices, const void* values,
                 size_t pairs) {
  auto* t = static_cast<uint8_t*>(base);
  const auto* v = static_cast<const uint8_t*>(values);
  switch (dtype) {
    case DType::kFloat32:
      scatter_typed<float>(t, base_index, indices, v, pairs, [](float a, float b) { return a + b; });
      return;
    case DType::kInt32:
      // Wraps around, like add_into.
      scatter_typed<uint32_t>(t, base_index, indices, v, pairs, [](uint32_t a, uint32_t b) { return a + b; });
      return;
    case DType::kBFloat16:
    case DType::kFloat16:
      // Each sum in fp32, rounded back: add_into's rule for one element.
      for (size_t i = 0; i < pairs; ++i) add_into(dtype, t + (indices[i] - base_index) * 2, v + i * 2, 1);
      return;
  }
}

void add_view_into(DType dtype, const VectorView& v, void* base, uint64_t base_index) {
  if (v.dense) {
    add_into(dtype, static_cast<uint8_t*>(base) + (v.begin - base_index) * v.elem_size, v.values,
             static_cast<size_t>(v.length()));
  } else {
    scatter_add(dtype, base, base_index, v.indices, v.values, v.pairs);
  }
}

void write_view(DType dtype, const VectorView& v, void* tensor) {
  auto* dst = static_cast<uint8_t*>(tensor) + v.begin * v.elem_size;
  if (v.dense) {
    if (v.values != dst) std::memcpy(dst, v.values, v.length() * v.elem_size);
    return;
  }
  std::memset(dst, 0, v.length() * v.elem_size);
  scatter_add(dtype, tensor, 0, v.indices, v.values, v.pairs);
}

void densify(DType dtype, SparseVector& v) {
  if (v.dense) return;
  std::vector<uint8_t> dense(static_cast<size_t>(v.end - v.begin) * v.elem_size, 0);
  scatter_add(dtype, dense.data(), v.begin, v.indices.data(), v.values.data(), v.pairs());
  v.values = std::move(dense);
  v.indices.clear();
  v.dense = true;
}

void merge_into(DType dtype, SparseVector& acc, const SparseVector& other, SparseVector& scratch) {
  if (acc.dense) {
    add_view_into(dtype, other.view(), acc.values.data(), acc.begin);
    return;
  }
  const size_t e = acc.elem_size;
  if (other.dense) {
    // The result is dense: start from other and add acc's pairs.
    scratch.reset(other.begin, other.end, true, e);
    scratch.values = other.values;
    scatter_add(dtype, scratch.values.data(), scratch.begin, acc.indices.data(), acc.values.data(), acc.pairs());
    std::swap(acc, scratch);
    return;
  }
  scratch.reset(acc.begin, acc.end, false, e);
  scratch.indices.reserve(acc.pairs() + other.pairs());
  scratch.values.reserve((acc.pairs() + other.pairs()) * e);
  const uint8_t* a = acc.values.data();
  const uint8_t* b = other.values.data();
  size_t i = 0, j = 0;
  while (i < acc.pairs() || j < other.pairs()) {
    if (j == other.pairs() || (i < acc.pairs() && acc.indices[i] < other.indices[j])) {
      scratch.indices.push_back(acc.indices[i]);
      append_value(scratch.values, a + e * i++, e);
    } else if (i == acc.pairs() || other.indices[j] < acc.indices[i]) {
      scratch.indices.push_back(other.indices[j]);
      append_value(scratch.values, b + e * j++, e);
    } else {
      scratch.indices.push_back(acc.indices[i]);
      append_value(scratch.values, a + e * i++, e);
      add_into(dtype, scratch.values.data() + scratch.values.size() - e, b + e * j++, 1);
    }
  }
  std::swap(acc, scratch);
  if (dense_is_smaller(acc.pairs(), acc.end - acc.begin, e)) densify(dtype, acc);
}

}  // namespace omnib
