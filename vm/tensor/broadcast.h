// NumPy broadcasting: result shapes and input offsets.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <utility>

#include "vm/tensor/tensor.h"

namespace tessera {

// Broadcast result of two shapes; throws "OP: shapes [..] and [..] are
// incompatible" (op is the operator symbol or built-in name).
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);

// Strides (in elements) for reading an input of shape `in` as if it had the
// broadcast shape `out`: broadcast dims get stride 0. Precondition: `in`
// broadcasts to `out`.
Shape broadcast_strides(const Shape& in, const Shape& out);

// Walks every element of `out` in row-major order, calling
// fn(out_index, offset_0, ..., offset_{N-1}) with the flat offsets of the N
// inputs (given by their broadcast strides). The innermost dimension runs as
// a tight loop; the outer ones use an odometer.
template <size_t N, typename Fn>
void for_each_broadcast(const Shape& out, const std::array<const Shape*, N>& strides, Fn&& fn) {
  const size_t rank = out.size();
  int64_t total = 1;
  for (int64_t d : out) total *= d;
  if (total == 0) return;
  if (rank == 0) {
    std::array<int64_t, N> off{};
    std::apply([&](auto... o) { fn(int64_t{0}, o...); }, off);
    return;
  }
  const int64_t inner = out[rank - 1];
  std::array<int64_t, N> inner_stride{};
  for (size_t k = 0; k < N; ++k) inner_stride[k] = (*strides[k])[rank - 1];
  std::array<int64_t, kMaxRank> counter{};
  std::array<int64_t, N> base{};
  for (int64_t i = 0; i < total; i += inner) {
    for (int64_t j = 0; j < inner; ++j) {
      std::array<int64_t, N> off;
      for (size_t k = 0; k < N; ++k) off[k] = base[k] + j * inner_stride[k];
      std::apply([&](auto... o) { fn(i + j, o...); }, off);
    }
    // Advance the odometer over the outer dims.
    for (size_t d = rank - 1; d-- > 0;) {
      for (size_t k = 0; k < N; ++k) base[k] += (*strides[k])[d];
      if (++counter[d] < out[d]) break;
      for (size_t k = 0; k < N; ++k) base[k] -= (*strides[k])[d] * out[d];
      counter[d] = 0;
    }
  }
}

}  // namespace tessera

namespace tessera {

// Walks `out` (row-major) one row at a time, where a row runs along the
// innermost dimension after merging the dims every input can merge (equal
// shapes become one row of numel elements). Calls
// fn(out_offset, row_length, offset_0, inner_stride_0, ..., offset_{N-1}, inner_stride_{N-1})
// with each input's flat offset and its stride along the row (0 = broadcast).
template <size_t N, typename Fn>
void for_each_row(const Shape& out, const std::array<const Shape*, N>& strides, Fn&& fn) {
  // Merge dims from the inside out: dim d joins the row block below it when
  // every input's stride at d equals its stride below times the extent below.
  Shape dims;
  std::array<Shape, N> st;
  for (size_t d = 0; d < out.size(); ++d) {
    if (out[d] == 1) continue;  // size-1 dims never move an offset
    bool merge = !dims.empty();
    for (size_t k = 0; k < N && merge; ++k) merge = (*strides[k])[d] * out[d] == st[k].back();
    if (merge) {
      dims.back() *= out[d];
      for (size_t k = 0; k < N; ++k) st[k].back() = (*strides[k])[d];
    } else {
      dims.push_back(out[d]);
      for (size_t k = 0; k < N; ++k) st[k].push_back((*strides[k])[d]);
    }
  }
  int64_t total = 1;
  for (int64_t d : out) total *= d;
  if (total == 0) return;
  if (dims.empty()) {  // a single element
    dims.push_back(1);
    for (size_t k = 0; k < N; ++k) st[k].push_back(0);
  }
  std::array<int64_t, N> inner_stride{}, base{};
  const size_t rank = dims.size();
  const int64_t inner = dims.back();
  for (size_t k = 0; k < N; ++k) inner_stride[k] = st[k].back();
  std::array<int64_t, kMaxRank> counter{};
  for (int64_t i = 0; i < total; i += inner) {
    [&]<size_t... K>(std::index_sequence<K...>) {
      fn(i, inner, base[K]..., inner_stride[K]...);
    }(std::make_index_sequence<N>{});
    for (size_t d = rank - 1; d-- > 0;) {
      for (size_t k = 0; k < N; ++k) base[k] += st[k][d];
      if (++counter[d] < dims[d]) break;
      for (size_t k = 0; k < N; ++k) base[k] -= st[k][d] * dims[d];
      counter[d] = 0;
    }
  }
}

}  // namespace tessera
