// linear: y = x . W^T + b with W as [out, in]; the bias goes through the oneDNN primitive.
#include "autograd/grad_mode.h"
#include "autograd/kernels/dispatch.h"
#include "autograd/kernels/parallel.h"
#include "autograd/node.h"
#include "autograd/ops.h"
#include "autograd/ops/matmul_impl.h"
#include "autograd/profile.h"

namespace heed {
namespace {

// Sums the rows of a contiguous [N, C] tensor: the bias gradient.
Tensor column_sums(const Tensor& g2) {
  const int64_t rows = g2.size(0), cols = g2.size(1);
  Tensor out = Tensor::empty({cols}, g2.dtype());
  dispatch_float(g2.dtype(), "linear backward", [&]<typename T>() {
    const T* g = g2.data<T>();
    T* o = out.data<T>();
    constexpr int64_t kBlock = 64;
    const int64_t blocks = (cols + kBlock - 1) / kBlock;
    parallel_for(blocks, rows * kBlock, [&](int64_t blk) {
      const int64_t c0 = blk * kBlock, c1 = std::min(cols, c0 + kBlock);
      double acc[kBlock] = {};
      for (int64_t r = 0; r < rows; ++r) {
        const T* row = g + r * cols;
        for (int64_t c = c0; c < c1; ++c) acc[c - c0] += row[c];
      }
      for (int64_t c = c0; c < c1; ++c) o[c] = static_cast<T>(acc[c - c0]);
    });
  });
  return out;
}

// a . b for backward (no autograd), b packed first when that pays: both of a Linear's
// gradient products read one operand with every row of the other.
Tensor product(const Tensor& a, const Tensor& b) {
  Tensor out =
      Tensor::empty({a.size(0), b.size(1)}, a.dtype() == DType::f64 ? DType::f64 : DType::f32);
  if (out.numel() == 0) return out;
  if (a.size(1) == 0) {
    out.zero_();
  } else {
    matmul_into(a, b, Tensor(), out, /*pack_b=*/true);
  }
  return out;
}

struct LinearBackward : Node {
  Shape x_shape;
  WeightLayout layout = WeightLayout::out_in;
  const char* name() const override { return "LinearBackward"; }
  std::vector<Tensor> backward(const Tensor& g) override {
    Tensor x2 = saved(0), w = saved(1);
    Tensor g2 = g.contiguous().reshape({-1, g.size(-1)});
    // With bf16 products the input was saved in bf16; the gradient is rounded once for both
    // of its products.
    const Tensor g_operand = x2.dtype() == DType::bf16 ? to_bf16_keep_layout(g2) : g2;
    Tensor gx, gw, gb;
    const bool out_in = layout == WeightLayout::out_in;
    if (next_edges[0]) gx = product(g_operand, out_in ? w : w.transpose(0, 1)).reshape(x_shape);
    if (next_edges[1]) {
      gw = out_in ? product(g_operand.transpose(0, 1), x2) : product(x2.transpose(0, 1), g_operand);
    }
    if (next_edges.size() > 2 && next_edges[2]) gb = column_sums(g2);
    return {gx, gw, gb};
  }
};

}  // namespace

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias, WeightLayout layout) {
  OpTimer timer("linear");
  const bool out_in = layout == WeightLayout::out_in;
  const char* layout_name = out_in ? "[out, in]" : "[in, out]";
  HEED_CHECK(weight.dim() == 2, "linear: weight must be {}, got {}", layout_name,
             weight.shape_str());
  const int64_t in_features = weight.size(out_in ? 1 : 0);
  const int64_t out_features = weight.size(out_in ? 0 : 1);
  HEED_CHECK(x.dim() >= 1 && x.size(-1) == in_features,
             "linear: input {} does not match weight {} = {}", x.shape_str(), layout_name,
             weight.shape_str());
  HEED_CHECK(!bias.defined() || (bias.dim() == 1 && bias.size(0) == out_features),
             "linear: bias {} does not match weight {}", bias.shape_str(), weight.shape_str());
  HEED_CHECK(x.dtype() == weight.dtype() && (!bias.defined() || bias.dtype() == x.dtype()),
             "linear: dtypes differ: input {}, weight {}", x.dtype(), weight.dtype());
  HEED_CHECK(x.dtype() == DType::f32 || x.dtype() == DType::f64,
             "linear: expected f32 or f64, got {}", x.dtype());
  Tensor x2;
  {
    NoGradGuard no_grad;
    x2 = x.contiguous().reshape({-1, x.size(-1)});
    // bf16 products round the input once, here, and backward reuses that copy (half the
    // memory of the f32 input, and no second conversion for the weight gradient).
    if (x.dtype() == DType::f32 && matmul_precision() == MatmulPrecision::bf16) {
      x2 = to_bf16_keep_layout(x2);
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
  std::vector<Tensor> inputs{x, weight};
  if (bias.defined()) inputs.push_back(bias);
  if (needs_grad(inputs)) {
    auto node = std::make_shared<LinearBackward>();
    node->x_shape = x.shape();
    node->layout = layout;
    node->save_copy_of(x2, x);
    node->save(weight);
    attach_node(out, node, inputs);
  }
  return out;
}

}  // namespace heed
