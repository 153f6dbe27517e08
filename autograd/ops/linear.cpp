// linear: y = x . W^T + b with W as [out, in]; the bias goes through the oneDNN primitive.
#include <algorithm>

#include "autograd/grad_mode.h"
#include "autograd/kernels/dispatch.h"
#include "autograd/kernels/onednn_matmul.h"
#include "autograd/kernels/parallel.h"
#include "autograd/node.h"
#include "autograd/ops.h"
#include "autograd/ops/linear_impl.h"
#include "autograd/ops/matmul_impl.h"
#include "base/profile.h"

namespace heed {
namespace {

struct LinearBackward : Node {
  Shape x_shape;
  WeightLayout layout = WeightLayout::out_in;
  // What the product read as the input, [rows, in] (its bf16 copy with bf16 products).
  SavedTensor input{this}, weight{this};
  const char* name() const override { return "LinearBackward"; }
  std::vector<Tensor> backward(const Tensor& g) override;
};

}  // namespace

Tensor linear_product(const Tensor& x, const Tensor& weight, const Tensor& bias,
                      WeightLayout layout, const char* op, Tensor* x_operand) {
  const bool out_in = layout == WeightLayout::out_in;
  const char* layout_name = out_in ? "[out, in]" : "[in, out]";
  HEED_CHECK(weight.dim() == 2, "{}: weight must be {}, got {}", op, layout_name,
             weight.shape_str());
  const int64_t in_features = weight.size(out_in ? 1 : 0);
  const int64_t out_features = weight.size(out_in ? 0 : 1);
  HEED_CHECK(x.dim() >= 1 && x.size(-1) == in_features,
             "{}: input {} does not match weight {} = {}", op, x.shape_str(), layout_name,
             weight.shape_str());
  HEED_CHECK(!bias.defined() || (bias.dim() == 1 && bias.size(0) == out_features),
             "{}: bias {} does not match weight {}", op, bias.shape_str(), weight.shape_str());
  HEED_CHECK(x.dtype() == weight.dtype() && (!bias.defined() || bias.dtype() == x.dtype()),
             "{}: dtypes differ: input {}, weight {}", op, x.dtype(), weight.dtype());
  HEED_CHECK(x.dtype() == DType::f32 || x.dtype() == DType::f64, "{}: expected f32 or f64, got {}",
             op, x.dtype());
  Tensor& x2 = *x_operand;
  {
    NoGradGuard no_grad;
    x2 = x.contiguous().reshape({-1, x.size(-1)});
    // bf16 products round the input once, here, and backward reuses that copy (half the
    // memory of the f32 input, and no second conversion for the weight gradient).
    if (x.dtype() == DType::f32 && matmul_precision() == MatmulPrecision::bf16) {
      x2 = shared_bf16_copy(x2);
    }
  }
  Shape out_shape = x.shape();
  out_shape.back() = out_features;
  Tensor out = Tensor::empty(out_shape, x.dtype());
  if (out.numel() > 0) {
    Tensor out2 = out.reshape({-1, out_features});
    matmul_into(x2, out_in ? weight.transpose(0, 1) : weight,
                bias.defined() ? bias.contiguous() : bias, out2, /*pack_b=*/true);
  }
  return out;
}

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias, WeightLayout layout) {
  OpTimer timer("linear");
  Tensor x2;
  Tensor out = linear_product(x, weight, bias, layout, "linear", &x2);
  std::vector<Tensor> inputs{x, weight};
  if (bias.defined()) inputs.push_back(bias);
  if (needs_grad(inputs)) {
    auto node = std::make_shared<LinearBackward>();
    node->x_shape = x.shape();
    node->layout = layout;
    node->input.save_copy_of(x2, x);
    node->weight.save(weight);
    attach_node(out, node, inputs);
  }
  return out;
}

namespace {

// The bias gradient of a contiguous [N, C] gradient. With `rounded`, the same pass also writes
// the gradient rounded to bf16 for the bf16 products (one read of the gradient instead of two).
Tensor column_sums(const Tensor& g2, Tensor* rounded) {
  const int64_t rows = g2.size(0), cols = g2.size(1);
  if (rounded != nullptr) *rounded = Tensor::empty({rows, cols}, DType::bf16);
  Tensor out;
  dispatch_float(g2.dtype(), "linear backward", [&]<typename T>() {
    const T* g = g2.data<T>();
    const auto row_of = [&](int64_t r, T*) { return g + r * cols; };
    out = sum_gradient_rows<T>(rows, cols, row_of, [&](int64_t r, const T* row) {
      if (rounded != nullptr) write_rounded_row(*rounded, r, row);
    });
  });
  return out;
}

}  // namespace

std::vector<Tensor> LinearBackward::backward(const Tensor& g) {
  const Tensor x2 = input.get(), w = weight.get();
  Tensor g2 = g.contiguous().reshape({-1, g.size(-1)});
  // With bf16 products the input was saved in bf16; the gradient is rounded once for both
  // of its products, in the bias gradient's pass over it when there is one.
  const bool bf16_products = x2.dtype() == DType::bf16 && g2.dtype() == DType::f32;
  Tensor g_operand = g2, gx, gw, gb;
  if (next_edges.size() > 2 && next_edges[2]) {
    gb = column_sums(g2, bf16_products ? &g_operand : nullptr);
  } else if (bf16_products) {
    g_operand = to_bf16_keep_layout(g2);
  }
  linear_gradient_products(g_operand, x2, w, layout, x_shape, next_edges[0] ? &gx : nullptr,
                           next_edges[1] ? &gw : nullptr);
  return {gx, gw, gb};
}

namespace {

// a . b for backward (no autograd), b packed first when that pays: both of a Linear's
// gradient products read one operand with every row of the other.
Tensor product(const Tensor& a, const Tensor& b, PackedOperands* reuse = nullptr) {
  Tensor out =
      Tensor::empty({a.size(0), b.size(1)}, a.dtype() == DType::f64 ? DType::f64 : DType::f32);
  if (out.numel() == 0) return out;
  if (a.size(1) == 0) {
    out.zero_();
  } else {
    matmul_into(a, b, Tensor(), out, /*pack_b=*/true, reuse);
  }
  return out;
}

// a^T . b, the sum over the rows of both: a Linear's weight gradient. f32 and bf16 run as
// oneDNN's inner-product weight gradient where that is the faster kernel; f64, bf16 on a CPU
// without bf16 products, and products with many rows (b packed) as the transposed matmul.
Tensor weight_gradient(const Tensor& a, const Tensor& b) {
  const bool onednn =
      a.dtype() == b.dtype() &&
      (a.dtype() == DType::f32 || (a.dtype() == DType::bf16 && onednn_bf16_matmul_available()));
  if (onednn && a.size(0) > 0) {
    Tensor out = Tensor::empty({a.size(1), b.size(1)}, DType::f32);
    if (onednn_transposed_product(a.contiguous(), b.contiguous(), out)) return out;
  }
  return product(a.transpose(0, 1), b);
}

}  // namespace

void linear_gradient_products(const Tensor& g_operand, const Tensor& x_operand,
                              const Tensor& weight, WeightLayout layout, const Shape& x_shape,
                              Tensor* gx, Tensor* gw, PackedOperands* reuse) {
  const bool out_in = layout == WeightLayout::out_in;
  if (gx) {
    *gx = product(g_operand, out_in ? weight : weight.transpose(0, 1), reuse).reshape(x_shape);
  }
  if (gw) {
    *gw = out_in ? weight_gradient(g_operand, x_operand) : weight_gradient(x_operand, g_operand);
  }
}

}  // namespace heed
