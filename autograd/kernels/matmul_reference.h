#pragma once
// The reference matrix product: plain loops over any strides and broadcast batch dims,
// accumulating in double. It is the f64 path for gradient checks and the oracle that the
// oneDNN path is tested against.
#include <cstdint>

#include "autograd/kernels/dispatch.h"
#include "autograd/kernels/parallel.h"
#include "autograd/tensor.h"

namespace heed {

// a [.., M, K], b [.., K, N] (same ndim, batch dims equal or 1), out [.., M, N] with any
// strides (as oneDNN's destination: attention writes heads into views of [B, T, 3C] memory).
template <typename T>
void matmul_reference(const Tensor& a, const Tensor& b, const Tensor& bias, const Tensor& out) {
  const int64_t nd = out.dim();
  const int64_t M = out.shape()[nd - 2], N = out.shape()[nd - 1], K = a.shape()[nd - 1];
  const int64_t batches = out.numel() / std::max<int64_t>(M * N, 1);
  const T* A = static_cast<const T*>(a.raw_data());
  const T* B = static_cast<const T*>(b.raw_data());
  const T* bias_data = bias.defined() ? static_cast<const T*>(bias.raw_data()) : nullptr;
  const int64_t bias_step = bias.defined() ? bias.strides().back() : 0;
  T* C = static_cast<T*>(out.raw_data());
  const int64_t am = a.strides()[nd - 2], ak = a.strides()[nd - 1];
  const int64_t bk = b.strides()[nd - 2], bn = b.strides()[nd - 1];
  parallel_for(batches * M, K * N, [&](int64_t row) {
    const int64_t batch = row / M, i = row % M;
    int64_t a_off = 0, b_off = 0, c_off = 0, rest = batch;
    for (int64_t d = nd - 3; d >= 0; --d) {
      const int64_t coord = rest % out.shape()[d];
      rest /= out.shape()[d];
      if (a.shape()[d] != 1) a_off += coord * a.strides()[d];
      if (b.shape()[d] != 1) b_off += coord * b.strides()[d];
      c_off += coord * out.strides()[d];
    }
    const T* a_row = A + a_off + i * am;
    T* c_row = C + c_off + i * out.strides()[nd - 2];
    const int64_t cn = out.strides()[nd - 1];
    for (int64_t j = 0; j < N; ++j) {
      double acc = bias_data ? to_double(bias_data[j * bias_step]) : 0.0;
      const T* b_col = B + b_off + j * bn;
      for (int64_t k = 0; k < K; ++k) acc += to_double(a_row[k * ak]) * to_double(b_col[k * bk]);
      c_row[j * cn] = from_double<T>(acc);
    }
  });
}

}  // namespace heed
