// LayerNorm over the last dim, fused: one pass computes mean and rstd per row (saved for
// backward), a second writes the normalised, scaled and shifted output.
#include <omp.h>

#include <cmath>

#include "autograd/kernels/dispatch.h"
#include "autograd/kernels/parallel.h"
#include "autograd/node.h"
#include "autograd/ops.h"
#include "autograd/profile.h"

namespace heed {
namespace {

struct LayerNormBackward : Node {
  int64_t rows = 0, width = 0;
  const char* name() const override { return "LayerNormBackward"; }
  std::vector<Tensor> backward(const Tensor& g_in) override {
    Tensor x = saved(0), w = saved(1), stats = saved(2);
    Tensor g = g_in.contiguous();
    Tensor gx = Tensor::empty(x.shape(), x.dtype());
    Tensor gw = zeros({width}, x.dtype()), gb = zeros({width}, x.dtype());
    dispatch_float(x.dtype(), "layer_norm backward", [&]<typename T>() {
      const T* xp = x.data<T>();
      const T* wp = w.data<T>();
      const T* st = stats.data<T>();  // [rows, 2]: mean, rstd
      const T* gp = g.data<T>();
      T* gxp = gx.data<T>();
      const bool parallel = rows * width > kParallelGrain;
      const int threads = parallel ? omp_get_max_threads() : 1;
      // Per-thread partial sums of the weight and bias gradients, added at the end.
      std::vector<double> partial(static_cast<size_t>(threads) * 2 * width, 0.0);
#pragma omp parallel num_threads(threads)
      {
        double* pw = partial.data() + static_cast<size_t>(omp_get_thread_num()) * 2 * width;
        double* pb = pw + width;
#pragma omp for schedule(static)
        for (int64_t r = 0; r < rows; ++r) {
          const T* xr = xp + r * width;
          const T* gr = gp + r * width;
          T* out = gxp + r * width;
          const T mean = st[2 * r], rstd = st[2 * r + 1];
          T sum_dy = 0, sum_dy_xhat = 0;
          for (int64_t c = 0; c < width; ++c) {
            const T xhat = (xr[c] - mean) * rstd;
            const T dy = gr[c] * wp[c];
            sum_dy += dy;
            sum_dy_xhat += dy * xhat;
            pw[c] += gr[c] * xhat;
            pb[c] += gr[c];
          }
          const T inv_n = T(1) / static_cast<T>(width);
          for (int64_t c = 0; c < width; ++c) {
            const T xhat = (xr[c] - mean) * rstd;
            out[c] = rstd * (gr[c] * wp[c] - inv_n * sum_dy - xhat * inv_n * sum_dy_xhat);
          }
        }
      }
      T* gwp = gw.data<T>();
      T* gbp = gb.data<T>();
      for (int t = 0; t < threads; ++t) {
        const double* pw = partial.data() + static_cast<size_t>(t) * 2 * width;
        for (int64_t c = 0; c < width; ++c) {
          gwp[c] += static_cast<T>(pw[c]);
          gbp[c] += static_cast<T>(pw[width + c]);
        }
      }
    });
    return {gx, gw, gb};
  }
};

}  // namespace

Tensor layer_norm(const Tensor& x_in, const Tensor& weight, const Tensor& bias, double eps) {
  OpTimer timer("layer_norm");
  const int64_t width = x_in.size(-1);
  HEED_CHECK(
      weight.dim() == 1 && weight.size(0) == width && bias.dim() == 1 && bias.size(0) == width,
      "layer_norm: weight {} and bias {} must be [{}] for input {}", weight.shape_str(),
      bias.shape_str(), width, x_in.shape_str());
  HEED_CHECK(x_in.dtype() == weight.dtype() && x_in.dtype() == bias.dtype(),
             "layer_norm: dtypes differ: input {}, weight {}, bias {}", x_in.dtype(),
             weight.dtype(), bias.dtype());
  Tensor x = x_in.contiguous(), w = weight.contiguous(), b = bias.contiguous();
  const int64_t rows = width > 0 ? x.numel() / width : 0;
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  Tensor stats = Tensor::empty({rows, 2}, x.dtype());
  dispatch_float(x.dtype(), "layer_norm", [&]<typename T>() {
    const T* xp = x.data<T>();
    const T* wp = w.data<T>();
    const T* bp = b.data<T>();
    T* o = out.data<T>();
    T* st = stats.data<T>();
    parallel_for(rows, width, [&](int64_t r) {
      const T* xr = xp + r * width;
      T sum = 0;
      for (int64_t c = 0; c < width; ++c) sum += xr[c];
      const T mean = sum / static_cast<T>(width);
      T sq = 0;
      for (int64_t c = 0; c < width; ++c) sq += (xr[c] - mean) * (xr[c] - mean);
      const T rstd = T(1) / std::sqrt(sq / static_cast<T>(width) + static_cast<T>(eps));
      T* orow = o + r * width;
      for (int64_t c = 0; c < width; ++c) orow[c] = (xr[c] - mean) * rstd * wp[c] + bp[c];
      st[2 * r] = mean;
      st[2 * r + 1] = rstd;
    });
  });
  if (needs_grad({&x_in, &weight, &bias})) {
    auto node = std::make_shared<LayerNormBackward>();
    node->rows = rows;
    node->width = width;
    node->save(x);
    node->save(w);
    node->save(stats);
    attach_node(out, node, {x_in, weight, bias});
  }
  return out;
}

}  // namespace heed
