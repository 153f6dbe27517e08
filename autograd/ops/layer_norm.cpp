// LayerNorm over the last dim, fused: one pass computes mean and rstd per row (saved for
// backward), a second writes the normalised, scaled and shifted output.
#include "autograd/kernels/dispatch.h"
#include "autograd/kernels/layer_norm_rows.h"
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
      layer_norm_backward_rows<T>(x.data<T>(), g.data<T>(), w.data<T>(), stats.data<T>(), rows,
                                  width, gx.data<T>(), gw.data<T>(), gb.data<T>(), [](int64_t) {});
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
      layer_norm_row<T>(xp + r * width, width, wp, bp, eps, o + r * width, st + 2 * r);
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
