// LayerNorm over the last dim, a row at a time (kernels/layer_norm_rows.h, through
// kernels/row_kernels.h): mean and rstd per row, saved for backward, and the normalised,
// scaled and shifted output.
#include <algorithm>
#include <vector>

#include "autograd/kernels/dispatch.h"
#include "autograd/kernels/parallel.h"
#include "autograd/kernels/row_kernels.h"
#include "autograd/node.h"
#include "autograd/ops.h"
#include "autograd/ops/elementwise.h"
#include "base/profile.h"

namespace heed {
namespace {

// Rows of the weight and bias gradients' sums: fixed blocks, as for Linear's bias gradient, so
// that the sums do not depend on the thread count.
constexpr int64_t kParameterSumBlocks = 16;

struct LayerNormBackward : Node {
  int64_t rows = 0, width = 0;
  SavedTensor input{this}, weight{this}, stats{this};  // stats: [rows, 2], mean and rstd
  const char* name() const override { return "LayerNormBackward"; }
  std::vector<Tensor> backward(const Tensor& g_in) override;
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
      const int64_t at = r * width;
      kernels::layer_norm_row(xp + at, wp, bp, width, static_cast<T>(eps), o + at, &st[2 * r],
                              &st[2 * r + 1]);
    });
  });
  if (needs_grad({&x_in, &weight, &bias})) {
    auto node = std::make_shared<LayerNormBackward>();
    node->rows = rows;
    node->width = width;
    node->input.save(x);
    node->weight.save(w);
    node->stats.save(stats);
    attach_node(out, node, {x_in, weight, bias});
  }
  return out;
}

std::vector<Tensor> LayerNormBackward::backward(const Tensor& g_in) {
  const Tensor x = input.get(), w = weight.get(), st_saved = stats.get();
  // The input gradient over the incoming one where nothing else holds it.
  Tensor gx = reusable_gradient(g_in, x.shape());
  Tensor g = g_in.contiguous();
  Tensor gw = Tensor::empty({width}, x.dtype()), gb = Tensor::empty({width}, x.dtype());
  const int64_t blocks = std::max<int64_t>(std::min(rows, kParameterSumBlocks), 1);
  // Each block's sums of the weight and bias gradients, [blocks, 2, width], added last.
  std::vector<double> partial(static_cast<size_t>(blocks * 2 * width));
  dispatch_float(x.dtype(), "layer_norm backward", [&]<typename T>() {
    const T* xp = x.data<T>();
    const T* wp = w.data<T>();
    const T* st = st_saved.data<T>();  // [rows, 2]: mean, rstd
    const T* gp = g.data<T>();
    T* gxp = gx.data<T>();
    parallel_for(blocks, rows / blocks * width, [&](int64_t b) {
      double* sum_w = partial.data() + b * 2 * width;
      double* sum_b = sum_w + width;
      std::fill(sum_w, sum_w + 2 * width, 0.0);
      for (int64_t r = rows * b / blocks; r < rows * (b + 1) / blocks; ++r) {
        const int64_t at = r * width;
        kernels::layer_norm_backward_row(xp + at, gp + at, wp, width, st[2 * r], st[2 * r + 1],
                                         gxp + at, sum_w, sum_b);
      }
    });
    T* gwp = gw.data<T>();
    T* gbp = gb.data<T>();
    for (int64_t c = 0; c < width; ++c) {
      double total_w = 0.0, total_b = 0.0;
      for (int64_t b = 0; b < blocks; ++b) {
        total_w += partial[b * 2 * width + c];
        total_b += partial[b * 2 * width + width + c];
      }
      gwp[c] = static_cast<T>(total_w);
      gbp[c] = static_cast<T>(total_b);
    }
  });
  return {gx, gw, gb};
}

}  // namespace heed
