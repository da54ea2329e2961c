#include "baselines/sparse_vector.h"

#include <bit>
#include <cstring>
#include <utility>

#include "engine/reduce_ops.h"

namespace omnib {
namespace {

uint32_t add_bits(DType dtype, uint32_t a, uint32_t b) {
  if (dtype == DType::kFloat32) return std::bit_cast<uint32_t>(std::bit_cast<float>(a) + std::bit_cast<float>(b));
  return a + b;  // int32 wraps around, like add_into
}

}  // namespace

void SparseVector::reset(uint64_t b, uint64_t e, bool as_dense) {
  begin = b;
  end = e;
  dense = as_dense;
  indices.clear();
  values.clear();
  if (dense) values.assign(static_cast<size_t>(e - b), 0);
}

VectorView SparseVector::view() const {
  VectorView v;
  v.begin = begin;
  v.end = end;
  v.dense = dense;
  v.pairs = dense ? 0 : indices.size();
  v.indices = dense ? nullptr : indices.data();
  v.values = values.data();
  return v;
}

bool dense_is_smaller(size_t pairs, uint64_t length, size_t elem_size) {
  return static_cast<double>(pairs) * static_cast<double>(kIndexBytes + elem_size) >=
         static_cast<double>(length) * static_cast<double>(elem_size);
}

void extract_pairs(const void* tensor, uint64_t begin, uint64_t end, SparseVector& out) {
  out.reset(begin, end, false);
  const auto* words = static_cast<const uint32_t*>(tensor);
  auto take = [&](uint64_t from, uint64_t to) {
    for (uint64_t i = from; i < to; ++i) {
      if (words[i] == 0) continue;
      out.indices.push_back(static_cast<uint32_t>(i));
      out.values.push_back(words[i]);
    }
  };
  // Sparse inputs are mostly zero runs: test a group with one wide OR (it
  // vectorizes) and look at single elements only in groups that hold a value.
  constexpr uint64_t kGroup = 16;
  uint64_t i = begin;
  for (; i + kGroup <= end; i += kGroup) {
    uint32_t any = 0;
    for (uint64_t j = 0; j < kGroup; ++j) any |= words[i + j];
    if (any != 0) take(i, i + kGroup);
  }
  take(i, end);
}

VectorView extract_smaller(const void* tensor, uint64_t begin, uint64_t end, size_t elem_size, SparseVector& scratch) {
  extract_pairs(tensor, begin, end, scratch);
  if (!dense_is_smaller(scratch.pairs(), end - begin, elem_size)) return scratch.view();
  VectorView v;
  v.begin = begin;
  v.end = end;
  v.dense = true;
  v.values = static_cast<const uint32_t*>(tensor) + begin;
  return v;
}

void load_smaller(const void* tensor, uint64_t begin, uint64_t end, size_t elem_size, SparseVector& out) {
  extract_pairs(tensor, begin, end, out);
  if (!dense_is_smaller(out.pairs(), end - begin, elem_size)) return;
  const auto* words = static_cast<const uint32_t*>(tensor);
  out.indices.clear();
  out.dense = true;
  out.values.assign(words + begin, words + end);
}

void scatter_add(DType dtype, void* base, uint64_t base_index, const uint32_t* indices, const uint32_t* values,
                 size_t pairs) {
  if (dtype == DType::kFloat32) {
    auto* t = static_cast<float*>(base);
    for (size_t i = 0; i < pairs; ++i) t[indices[i] - base_index] += std::bit_cast<float>(values[i]);
  } else {
    auto* t = static_cast<uint32_t*>(base);
    for (size_t i = 0; i < pairs; ++i) t[indices[i] - base_index] += values[i];
  }
}

void add_view_into(DType dtype, const VectorView& v, void* base, uint64_t base_index) {
  if (v.dense) {
    add_into(dtype, static_cast<uint32_t*>(base) + (v.begin - base_index), v.values, static_cast<size_t>(v.length()));
  } else {
    scatter_add(dtype, base, base_index, v.indices, v.values, v.pairs);
  }
}

void write_view(DType dtype, const VectorView& v, void* tensor) {
  auto* dst = static_cast<uint32_t*>(tensor) + v.begin;
  if (v.dense) {
    if (v.values != dst) std::memcpy(dst, v.values, v.length() * sizeof(uint32_t));
    return;
  }
  std::memset(dst, 0, v.length() * sizeof(uint32_t));
  scatter_add(dtype, tensor, 0, v.indices, v.values, v.pairs);
}

void densify(DType dtype, SparseVector& v) {
  if (v.dense) return;
  std::vector<uint32_t> dense(static_cast<size_t>(v.end - v.begin), 0);
  scatter_add(dtype, dense.data(), v.begin, v.indices.data(), v.values.data(), v.pairs());
  v.values = std::move(dense);
  v.indices.clear();
  v.dense = true;
}

void merge_into(DType dtype, SparseVector& acc, const SparseVector& other, size_t elem_size, SparseVector& scratch) {
  if (acc.dense) {
    add_view_into(dtype, other.view(), acc.values.data(), acc.begin);
    return;
  }
  if (other.dense) {
    // The result is dense: start from other and add acc's pairs.
    scratch.reset(other.begin, other.end, true);
    scratch.values = other.values;
    scatter_add(dtype, scratch.values.data(), scratch.begin, acc.indices.data(), acc.values.data(), acc.pairs());
    std::swap(acc, scratch);
    return;
  }
  scratch.reset(acc.begin, acc.end, false);
  scratch.indices.reserve(acc.pairs() + other.pairs());
  scratch.values.reserve(acc.pairs() + other.pairs());
  size_t i = 0, j = 0;
  while (i < acc.pairs() || j < other.pairs()) {
    if (j == other.pairs() || (i < acc.pairs() && acc.indices[i] < other.indices[j])) {
      scratch.indices.push_back(acc.indices[i]);
      scratch.values.push_back(acc.values[i++]);
    } else if (i == acc.pairs() || other.indices[j] < acc.indices[i]) {
      scratch.indices.push_back(other.indices[j]);
      scratch.values.push_back(other.values[j++]);
    } else {
      scratch.indices.push_back(acc.indices[i]);
      scratch.values.push_back(add_bits(dtype, acc.values[i++], other.values[j++]));
    }
  }
  std::swap(acc, scratch);
  if (dense_is_smaller(acc.pairs(), acc.end - acc.begin, elem_size)) densify(dtype, acc);
}

}  // namespace omnib
