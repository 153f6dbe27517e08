// linear_gelu: gelu(x . W^T + b) with a backward that applies GELU's derivative in the bias
// gradient's pass over the gradient (and, with bf16 products, rounds the result in it too),
// so that the f32 gradient of the pre-activation is never written and read back. The input
// projection of every Transformer feed-forward block is this.
#include "autograd/grad_mode.h"
#include "autograd/kernels/parallel.h"
#include "autograd/kernels/row_kernels.h"
#include "autograd/node.h"
#include "autograd/ops.h"
#include "autograd/ops/elementwise.h"
#include "autograd/ops/linear_impl.h"
#include "autograd/storage.h"
#include "base/profile.h"

namespace heed {
namespace {

struct LinearGeluBackward : Node {
  Shape x_shape;
  WeightLayout layout = WeightLayout::out_in;
  GeluApproximation approximation = GeluApproximation::none;
  // The product's input as it read it ([rows, in], bf16 with bf16 products), and the
  // pre-activation (bf16 with bf16 products).
  SavedTensor input{this}, weight{this}, pre_activation{this};
  const char* name() const override { return "LinearGeluBackward"; }
  std::vector<Tensor> backward(const Tensor& g_in) override;
};

}  // namespace

Tensor linear_gelu(const Tensor& x, const Tensor& weight, const Tensor& bias,
                   GeluApproximation approximation, WeightLayout layout) {
  OpTimer timer("linear_gelu");
  HEED_CHECK(bias.defined(), "linear_gelu: needs a bias (use gelu(linear(...)) without one)");
  Tensor x2;
  Tensor h = linear_product(x, weight, bias, layout, "linear_gelu", &x2);
  // GELU over h; with bf16 products backward keeps h rounded to bf16, as the gelu op does
  // (half the memory of the largest activation of a layer), written in the same pass.
  std::vector<Tensor> inputs{x, weight, bias};
  const bool grad = needs_grad(inputs);
  const bool keep_bf16 = grad && h.dtype() == DType::f32 && x2.dtype() == DType::bf16;
  Tensor out = Tensor::empty(h.shape(), h.dtype());
  Tensor h_saved = keep_bf16 ? Tensor::empty(h.shape(), DType::bf16) : h;
  // The next Linear's bf16 product reads the output rounded: that copy is written in this
  // pass too and kept as the output storage's copy, where shared_bf16_copy finds it.
  std::shared_ptr<Storage> out_rounded;
  if (keep_bf16) out_rounded = std::make_shared<Storage>(h.numel() * sizeof(bf16));
  dispatch_float(h.dtype(), "linear_gelu", [&]<typename T>() {
    const T* hp = h.data<T>();
    T* o = out.data<T>();
    const int64_t n = h.numel();
    constexpr int64_t kChunk = 16384;
    parallel_for((n + kChunk - 1) / kChunk, kChunk, [&](int64_t c) {
      const int64_t begin = c * kChunk, end = std::min(n, begin + kChunk);
      kernels::gelu(approximation == GeluApproximation::tanh, hp + begin, end - begin, o + begin);
      if (keep_bf16) {  // only with f32 and bf16 products
        kernels::round_to_bf16(hp + begin, end - begin, h_saved.data<bf16>() + begin);
        kernels::round_to_bf16(o + begin, end - begin,
                               static_cast<bf16*>(out_rounded->data()) + begin);
      }
    });
  });
  if (out_rounded) out.storage()->set_bf16_copy(out_rounded);
  if (grad) {
    auto node = std::make_shared<LinearGeluBackward>();
    node->x_shape = x.shape();
    node->layout = layout;
    node->approximation = approximation;
    node->input.save_copy_of(x2, x);
    node->weight.save(weight);
    node->pre_activation.save(h_saved);
    attach_node(out, node, inputs);
  }
  return out;
}

std::vector<Tensor> LinearGeluBackward::backward(const Tensor& g_in) {
  const Tensor x2 = input.get(), w = weight.get();
  Tensor h = pre_activation.take();
  const int64_t cols = h.size(-1), rows = cols ? h.numel() / cols : 0;
  // The gradient before GELU: over the incoming one where possible; with bf16 products only
  // its bf16 rounding is written (all the products read), never the f32 values, over the
  // saved bf16 pre-activation when nothing else holds it (row r of h is read before row r
  // of the gradient is written).
  const bool bf16_products = x2.dtype() == DType::bf16 && g_in.dtype() == DType::f32;
  Tensor pre;
  if (bf16_products) {
    pre = h.dtype() == DType::bf16 && h.sole_owner() && h.is_contiguous()
              ? h.reshape({rows, cols})
              : Tensor::empty({rows, cols}, DType::bf16);
  } else {
    pre = reusable_gradient(g_in, g_in.shape()).reshape({rows, cols});
  }
  Tensor g = g_in.contiguous();  // row r is read before `pre`'s row r is written over it
  Tensor gb;
  const bool tanh = approximation == GeluApproximation::tanh;
  dispatch_float(g.dtype(), "linear_gelu backward", [&]<typename T>() {
    const T* gp = g.data<T>();
    const auto sum_rows = [&]<typename H>(const H* hp) {
      const auto row_of = [&](int64_t r, T* scratch) {
        T* row = bf16_products ? scratch : pre.data<T>() + r * cols;
        kernels::gelu_gradient(tanh, gp + r * cols, hp + r * cols, cols, row);
        return static_cast<const T*>(row);
      };
      gb = sum_gradient_rows<T>(rows, cols, row_of, [&](int64_t r, const T* row) {
        if (bf16_products) write_rounded_row(pre, r, row);
      });
    };
    // h is bf16 only with f32 and bf16 products.
    if (h.dtype() == DType::bf16) {
      sum_rows(h.data<bf16>());
    } else {
      sum_rows(h.data<T>());
    }
  });
  Tensor gx, gw;
  linear_gradient_products(pre, x2, w, layout, x_shape, next_edges[0] ? &gx : nullptr,
                           next_edges[1] ? &gw : nullptr);
  return {gx, gw, gb};
}

}  // namespace heed
