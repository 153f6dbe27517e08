#pragma once
// Iterates K operands of one (broadcast) shape, each with its own element strides, as
// rows: the body gets each operand's base offset for the row, the row length and each
// operand's stride along it. Adjacent dims that are contiguous for every operand are merged
// first, so same-shape contiguous tensors become one flat row split across threads.
#include <array>
#include <cstdint>
#include <vector>

#include "autograd/kernels/parallel.h"
#include "autograd/tensor.h"

namespace heed {

template <size_t K>
struct Layout {
  Shape shape;
  std::array<Shape, K> strides;
};

template <size_t K>
Layout<K> collapse_dims(const Shape& shape, const std::array<Shape, K>& strides) {
  Layout<K> out;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;  // size-1 dims carry no iteration
    bool merge = !out.shape.empty();
    for (size_t k = 0; k < K && merge; ++k) {
      merge = out.strides[k].back() == strides[k][d] * shape[d];
    }
    if (merge) {
      out.shape.back() *= shape[d];
      for (size_t k = 0; k < K; ++k) out.strides[k].back() = strides[k][d];
    } else {
      out.shape.push_back(shape[d]);
      for (size_t k = 0; k < K; ++k) out.strides[k].push_back(strides[k][d]);
    }
  }
  if (out.shape.empty()) {
    out.shape.push_back(1);
    for (size_t k = 0; k < K; ++k) out.strides[k].push_back(0);
  }
  return out;
}

// body(std::array<int64_t, K> base, int64_t n, std::array<int64_t, K> step)
template <size_t K, typename F>
void strided_loop(const Shape& shape, const std::array<Shape, K>& strides, F&& body) {
  if (shape_numel(shape) == 0) return;
  Layout<K> L = collapse_dims<K>(shape, strides);
  const int64_t nd = static_cast<int64_t>(L.shape.size());
  std::array<int64_t, K> step;
  for (size_t k = 0; k < K; ++k) step[k] = L.strides[k][nd - 1];

  if (nd == 1) {
    // One flat row: split it into chunks across threads.
    const int64_t n = L.shape[0];
    constexpr int64_t kChunk = 16384;
    const int64_t chunks = (n + kChunk - 1) / kChunk;
    parallel_for(chunks, kChunk, [&](int64_t c) {
      std::array<int64_t, K> base;
      const int64_t start = c * kChunk;
      for (size_t k = 0; k < K; ++k) base[k] = start * step[k];
      body(base, std::min(kChunk, n - start), step);
    });
    return;
  }
  const int64_t inner = L.shape[nd - 1];
  int64_t rows = 1;
  for (int64_t d = 0; d < nd - 1; ++d) rows *= L.shape[d];
  parallel_for(rows, inner, [&](int64_t row) {
    std::array<int64_t, K> base{};
    int64_t rest = row;
    for (int64_t d = nd - 2; d >= 0; --d) {
      const int64_t coord = rest % L.shape[d];
      rest /= L.shape[d];
      for (size_t k = 0; k < K; ++k) base[k] += coord * L.strides[k][d];
    }
    body(base, inner, step);
  });
}

// Serial iteration of one operand: body(int64_t base, int64_t n, int64_t step) per row.
template <typename F>
void strided_loop_serial(const Shape& shape, const Shape& strides, F&& body) {
  if (shape_numel(shape) == 0) return;
  Layout<1> L = collapse_dims<1>(shape, {strides});
  const int64_t nd = static_cast<int64_t>(L.shape.size());
  const int64_t inner = L.shape[nd - 1], step = L.strides[0][nd - 1];
  Shape coord(nd, 0);
  int64_t base = 0;
  while (true) {
    body(base, inner, step);
    int64_t d = nd - 2;
    for (; d >= 0; --d) {
      base += L.strides[0][d];
      if (++coord[d] < L.shape[d]) break;
      base -= coord[d] * L.strides[0][d];
      coord[d] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace heed
