// T5's layer norm over the last dim: x * rsqrt(mean(x^2) + eps) * w, with no mean taken out
// and no bias (Zhang and Sennrich's RMSNorm). Each row's rstd is saved for backward.
#include <algorithm>
#include <cmath>
#include <vector>

#include "autograd/kernels/dispatch.h"
#include "autograd/kernels/parallel.h"
#include "autograd/kernels/row_reduce.h"
#include "autograd/node.h"
#include "autograd/ops.h"
#include "autograd/ops/elementwise.h"
#include "base/profile.h"

namespace heed {
namespace {

// Rows of the weight gradient's sum: fixed blocks, as LayerNorm's, so that the sum does not
// depend on the thread count.
constexpr int64_t kWeightSumBlocks = 16;

// out = x * rstd * w over one row; returns rstd. The sum of squares keeps rows::kLanes
// partial sums, so the f32 row vectorises; f64 runs the same code as the reference.
template <typename T>
T rms_norm_row(const T* __restrict x, const T* __restrict w, int64_t width, T eps,
               T* __restrict out) {
  const T squares = rows::dot(x, x, width);
  const T rstd = T(1) / std::sqrt(squares / static_cast<T>(width) + eps);
  for (int64_t c = 0; c < width; ++c) out[c] = x[c] * rstd * w[c];
  return rstd;
}

// gx = rstd * (g*w - xhat * mean(g*w*xhat)) with xhat = x * rstd; adds g*xhat to sum_w.
// gx may be g: each g[c] is read before gx[c] is written.
template <typename T>
void rms_norm_backward_row(const T* __restrict x, const T* g, const T* __restrict w, int64_t width,
                           T rstd, T* gx, double* __restrict sum_w) {
  const T slope = rows::sum_of<T>(width, [&](int64_t c) { return g[c] * w[c] * x[c]; }) * rstd /
                  static_cast<T>(width);
  for (int64_t c = 0; c < width; ++c) {
    const T xhat = x[c] * rstd;
    sum_w[c] += g[c] * xhat;
    gx[c] = rstd * (g[c] * w[c] - xhat * slope);
  }
}

struct RmsNormBackward : Node {
  int64_t rows = 0, width = 0;
  SavedTensor input{this}, weight{this}, rstd{this};  // rstd: [rows]
  const char* name() const override { return "RmsNormBackward"; }
  std::vector<Tensor> backward(const Tensor& g_in) override;
};

}  // namespace

Tensor rms_norm(const Tensor& x_in, const Tensor& weight, double eps) {
  OpTimer timer("rms_norm");
  const int64_t width = x_in.dim() ? x_in.size(-1) : 0;
  HEED_CHECK(weight.dim() == 1 && weight.size(0) == width && width > 0,
             "rms_norm: weight {} must be [{}] for input {}", weight.shape_str(), width,
             x_in.shape_str());
  HEED_CHECK(x_in.dtype() == weight.dtype(), "rms_norm: dtypes differ: input {}, weight {}",
             x_in.dtype(), weight.dtype());
  Tensor x = x_in.contiguous(), w = weight.contiguous();
  const int64_t rows = x.numel() / width;
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  Tensor rstd = Tensor::empty({rows}, x.dtype());
  dispatch_float(x.dtype(), "rms_norm", [&]<typename T>() {
    const T* xp = x.data<T>();
    const T* wp = w.data<T>();
    T* o = out.data<T>();
    T* r = rstd.data<T>();
    parallel_for(rows, width, [&](int64_t row) {
      r[row] = rms_norm_row(xp + row * width, wp, width, static_cast<T>(eps), o + row * width);
    });
  });
  if (needs_grad({&x_in, &weight})) {
    auto node = std::make_shared<RmsNormBackward>();
    node->rows = rows;
    node->width = width;
    node->input.save(x);
    node->weight.save(w);
    node->rstd.save(rstd);
    attach_node(out, node, {x_in, weight});
  }
  return out;
}

std::vector<Tensor> RmsNormBackward::backward(const Tensor& g_in) {
  const Tensor x = input.get(), w = weight.get(), r_saved = rstd.get();
  Tensor gx = reusable_gradient(g_in, x.shape());
  Tensor g = g_in.contiguous();
  Tensor gw = Tensor::empty({width}, x.dtype());
  const int64_t blocks = std::max<int64_t>(std::min(rows, kWeightSumBlocks), 1);
  std::vector<double> partial(static_cast<size_t>(blocks * width), 0.0);
  dispatch_float(x.dtype(), "rms_norm backward", [&]<typename T>() {
    const T* xp = x.data<T>();
    const T* wp = w.data<T>();
    const T* r = r_saved.data<T>();
    const T* gp = g.data<T>();
    T* gxp = gx.data<T>();
    parallel_for(blocks, rows / blocks * width, [&](int64_t b) {
      double* sum_w = partial.data() + b * width;
      for (int64_t row = rows * b / blocks; row < rows * (b + 1) / blocks; ++row) {
        const int64_t at = row * width;
        rms_norm_backward_row(xp + at, gp + at, wp, width, r[row], gxp + at, sum_w);
      }
    });
    T* gwp = gw.data<T>();
    for (int64_t c = 0; c < width; ++c) {
      double total = 0.0;
      for (int64_t b = 0; b < blocks; ++b) total += partial[b * width + c];
      gwp[c] = static_cast<T>(total);
    }
  });
  return {gx, gw};
}

}  // namespace heed
