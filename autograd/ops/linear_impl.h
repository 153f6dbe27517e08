#pragma once
// What linear and linear_gelu share: the forward product, and backward's bias sums and
// gradient products. No autograd.
#include <algorithm>
#include <cstdint>

#include "autograd/kernels/dispatch.h"
#include "autograd/kernels/onednn_matmul.h"
#include "autograd/kernels/parallel.h"
#include "autograd/kernels/row_kernels.h"
#include "autograd/ops.h"

namespace heed {

// x [.., in] . weight (+ bias) into a new [.., out] tensor of x's type, with the op's checks.
// *x_operand receives what the product read as x, as [rows, in]: x itself, or its bf16 copy
// when the products run in bf16, which backward reuses for the weight gradient.
Tensor linear_product(const Tensor& x, const Tensor& weight, const Tensor& bias,
                      WeightLayout layout, const char* op, Tensor* x_operand);

// The input gradient (shaped as x_shape) and the weight gradient of a Linear from the
// gradient of its output before the bias, g_operand [rows, out] (bf16 when the products run in
// bf16); either may be skipped. `reuse` as for onednn_matmul_packed.
void linear_gradient_products(const Tensor& g_operand, const Tensor& x_operand,
                              const Tensor& weight, WeightLayout layout, const Shape& x_shape,
                              Tensor* gx, Tensor* gw, PackedOperands* reuse = nullptr);

// Row blocks of the bias gradient's sums: fixed, so that the sums do not depend on the
// thread count.
constexpr int64_t kBiasSumBlocks = 16;

// The bias gradient: the columns of a [rows, cols] gradient of type T summed in double, rows
// in order within kBiasSumBlocks blocks whose partial sums are added last.
// `row_of(r, scratch)` gives row r (a pointer into the gradient, or the row computed into
// `scratch`, cols elements the block owns); `after_row(r, row)` then sees it (to write it
// rounded to bf16, say), in the same pass.
template <typename T, typename RowOf, typename AfterRow>
Tensor sum_gradient_rows(int64_t rows, int64_t cols, RowOf row_of, AfterRow after_row) {
  Tensor out = Tensor::empty({cols}, dtype_of<T>());
  const int64_t blocks = std::max<int64_t>(std::min(rows, kBiasSumBlocks), 1);
  Tensor partial = Tensor::empty({blocks, cols}, DType::f64);
  Tensor scratch = Tensor::empty({blocks, cols}, dtype_of<T>());
  double* sums = partial.data<double>();
  parallel_for(blocks, rows / blocks * cols, [&](int64_t b) {
    double* acc = sums + b * cols;
    std::fill(acc, acc + cols, 0.0);
    T* block_scratch = scratch.data<T>() + b * cols;
    for (int64_t r = rows * b / blocks; r < rows * (b + 1) / blocks; ++r) {
      const T* row = row_of(r, block_scratch);
      kernels::add_to_sums(row, cols, acc);
      after_row(r, row);
    }
  });
  T* o = out.data<T>();
  for (int64_t c = 0; c < cols; ++c) {
    double total = 0.0;
    for (int64_t b = 0; b < blocks; ++b) total += sums[b * cols + c];
    o[c] = static_cast<T>(total);
  }
  return out;
}

// Writes row r of a bf16 [rows, cols] tensor from `row` (f32: only f32 runs bf16 products).
template <typename T>
void write_rounded_row(const Tensor& rounded, int64_t r, const T* row) {
  const int64_t cols = rounded.size(1);
  kernels::round_to_bf16(row, cols, rounded.data<bf16>() + r * cols);
}

}  // namespace heed
