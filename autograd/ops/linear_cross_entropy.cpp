// linear_cross_entropy: cross_entropy(x . W^T + b, targets) without the whole logits. A language
// model's head has as many outputs as its vocabulary, so its logits and their gradient are the
// largest tensors of a step (GPT-mini's: 4,096 x 8,192 floats, 134 MB). Here the rows go in
// chunks: a chunk's logits are computed, turned into the loss and the gradient in one pass
// over each row while the row is in cache, and the chunk's two gradient products run right after;
// then the chunk's memory serves the next. The gradients are ready at the end of the forward
// pass (the loss is a scalar, so backward only scales them by the incoming gradient). With a
// bias (BERT's masked-LM decoder) the product adds it, and its gradient, the column sums of the
// logits' gradient, is summed in the same pass over the rows (in LinearBackward's fixed row
// blocks, so the sums do not depend on the thread count).
#include <algorithm>
#include <cmath>
#include <limits>

#include "autograd/grad_mode.h"
#include "autograd/kernels/cross_entropy_row.h"
#include "autograd/kernels/dispatch.h"
#include "autograd/kernels/onednn_matmul.h"
#include "autograd/kernels/parallel.h"
#include "autograd/kernels/row_kernels.h"
#include "autograd/node.h"
#include "autograd/ops.h"
#include "autograd/ops/linear_impl.h"
#include "autograd/ops/matmul_impl.h"
#include "base/profile.h"

namespace heed {
namespace {

// Rows per chunk when the caller leaves it to the op: the fewest rows at which the products
// still read the weight packed in f32 (kernels/onednn_matmul.cpp's kMinRowsToPackB), so that
// chunking costs the products nothing. Chunks are equal, and at least this long when there
// are this many rows.
constexpr int64_t kDefaultChunkRows = 2048;

struct LinearCrossEntropyBackward : Node {
  // The gradients of the mean loss w.r.t. each input, computed in forward (undefined where
  // the input needs none).
  SavedTensor x_grad{this}, weight_grad{this}, bias_grad{this};
  const char* name() const override { return "LinearCrossEntropyBackward"; }
  std::vector<Tensor> backward(const Tensor& g) override;
};

}  // namespace

int64_t linear_cross_entropy_chunk_rows(int64_t rows) {
  const int64_t chunks = std::max<int64_t>(1, rows / kDefaultChunkRows);
  return (rows + chunks - 1) / chunks;
}

Tensor linear_cross_entropy(const Tensor& x, const Tensor& weight, const Tensor& targets,
                            int64_t ignore_index, double label_smoothing, int64_t chunk_rows,
                            Tensor* predictions) {
  return linear_cross_entropy(x, weight, Tensor(), targets, ignore_index, label_smoothing,
                              chunk_rows, predictions);
}

Tensor linear_cross_entropy(const Tensor& x, const Tensor& weight, const Tensor& bias,
                            const Tensor& targets_in, int64_t ignore_index, double label_smoothing,
                            int64_t chunk_rows, Tensor* predictions) {
  OpTimer timer("linear_cross_entropy");
  HEED_CHECK(weight.dim() == 2, "linear_cross_entropy: weight must be [classes, in], got {}",
             weight.shape_str());
  const int64_t classes = weight.size(0), in_features = weight.size(1);
  HEED_CHECK(x.dim() >= 1 && x.size(-1) == in_features,
             "linear_cross_entropy: input {} does not match weight {} = [classes, in]",
             x.shape_str(), weight.shape_str());
  HEED_CHECK(x.dtype() == weight.dtype() && (x.dtype() == DType::f32 || x.dtype() == DType::f64),
             "linear_cross_entropy: input and weight must both be f32 or f64, got {} and {}",
             x.dtype(), weight.dtype());
  HEED_CHECK(!bias.defined() ||
                 (bias.dim() == 1 && bias.size(0) == classes && bias.dtype() == weight.dtype()),
             "linear_cross_entropy: bias {} ({}) must be [{}] of the weight's type {}",
             bias.shape_str(), bias.dtype(), classes, weight.dtype());
  const Shape leading(x.shape().begin(), x.shape().end() - 1);
  HEED_CHECK(targets_in.shape() == leading,
             "linear_cross_entropy: targets {} do not match the input's rows {}",
             targets_in.shape_str(), x.shape_str());
  HEED_CHECK(targets_in.dtype() == DType::i64 || targets_in.dtype() == DType::i32,
             "linear_cross_entropy: targets must be integer class ids, got {}", targets_in.dtype());
  HEED_CHECK(label_smoothing >= 0.0 && label_smoothing <= 1.0,
             "linear_cross_entropy: label_smoothing must be in [0, 1], got {}", label_smoothing);
  HEED_CHECK(chunk_rows >= 0, "linear_cross_entropy: chunk_rows must be >= 0, got {}", chunk_rows);
  const int64_t rows = targets_in.numel();
  const std::vector<int64_t> targets = targets_in.to_vector<int64_t>();
  int64_t count = 0;
  for (int64_t r = 0; r < rows; ++r) {
    if (targets[r] == ignore_index) continue;
    HEED_CHECK(targets[r] >= 0 && targets[r] < classes,
               "linear_cross_entropy: target {} at row {} is out of range for {} classes",
               targets[r], r, classes);
    ++count;
  }
  const bool grad = needs_grad({&x, &weight, &bias});
  const bool x_grad = grad && x.requires_grad(), w_grad = grad && weight.requires_grad();
  const bool b_grad = grad && bias.defined() && bias.requires_grad();
  const Tensor bias_operand = bias.defined() ? bias.contiguous() : bias;
  const CrossEntropyRowOptions options{.ignore_index = ignore_index,
                                       .smoothing = label_smoothing,
                                       .scale = count > 0 ? 1.0 / static_cast<double>(count) : 0.0,
                                       .gradient = grad};

  NoGradGuard no_grad;
  // What the products read as x: x itself, or its bf16 rounding (made once for all chunks).
  Tensor x_operand = x.contiguous().reshape({rows, in_features});
  const bool bf16_products = x.dtype() == DType::f32 && matmul_precision() == MatmulPrecision::bf16;
  if (bf16_products) x_operand = shared_bf16_copy(x_operand);
  // The input gradient: the single chunk's own, or the chunks' written into one tensor.
  Tensor gx;
  Tensor gw, gb;  // the first chunk's weight and bias gradients, then the sums over the chunks
  Tensor predicted = predictions ? Tensor::empty({rows}, DType::i64) : Tensor();

  const int64_t chunks = chunk_rows > 0 ? (rows + chunk_rows - 1) / chunk_rows
                                        : std::max<int64_t>(1, rows / kDefaultChunkRows);
  // Every chunk's products read the weight: packed once for the logits' products and once for
  // the input gradient's, not once per chunk. In bf16 from 512 rows (the masked-LM head's 640):
  // oneDNN's bf16 kernel reading the plain transposed weight ran BERT-mini's head at 375
  // GFLOP/s, packed at 552 (docs/performance.md).
  PackedOperands packed_weight(/*bf16_min_rows=*/512);
  double total = 0.0;
  for (int64_t k = 0; k < chunks && rows > 0; ++k) {
    const int64_t begin = rows * k / chunks, end = rows * (k + 1) / chunks, n = end - begin;
    if (n == 0) continue;
    const Tensor x_chunk = x_operand.slice(0, begin, end);
    Tensor logits = Tensor::empty({n, classes}, x.dtype());
    if (classes > 0 && in_features > 0) {
      matmul_into(x_chunk, weight.transpose(0, 1), bias_operand, logits, /*pack_b=*/true,
                  &packed_weight);
    } else if (bias.defined()) {
      logits.copy_(expand(bias_operand, {n, classes}));  // no features: the bias alone
    } else {
      logits.zero_();
    }
    // With bf16 products only the gradient's rounding is written (what both products read).
    Tensor g_operand = grad && bf16_products ? Tensor::empty({n, classes}, DType::bf16) : logits;
    std::vector<double> row_loss(n, 0.0);
    Tensor gb_chunk;
    dispatch_float(logits.dtype(), "linear_cross_entropy", [&]<typename T>() {
      T* l = logits.data<T>();
      // Row r's loss, and with `rounded` its gradient's bf16 rounding alone (else the f32
      // gradient over the logits).
      const auto row_pass = [&](int64_t r, bf16* rounded) {
        int64_t* prediction = predictions ? predicted.data<int64_t>() + begin + r : nullptr;
        row_loss[r] = kernels::cross_entropy_row(l + r * classes, classes, targets[begin + r],
                                                 options, rounded, prediction);
      };
      if (b_grad) {
        // The bias gradient sums the f32 gradient's rows while each is in cache (as
        // LinearBackward's bias sums do), rounding it for the products in the same pass.
        gb_chunk = sum_gradient_rows<T>(
            n, classes,
            [&](int64_t r, T*) {
              row_pass(r, nullptr);
              return static_cast<const T*>(l + r * classes);
            },
            [&](int64_t r, const T* row) {
              if (bf16_products) write_rounded_row(g_operand, r, row);
            });
        return;
      }
      parallel_for(n, classes, [&](int64_t r) {
        row_pass(r, grad && bf16_products ? g_operand.data<bf16>() + r * classes : nullptr);
      });
    });
    for (double v : row_loss) total += v;
    if (!grad) continue;
    Tensor gx_chunk, gw_chunk;
    linear_gradient_products(g_operand, x_chunk, weight, WeightLayout::out_in,
                             Shape{n, in_features}, x_grad ? &gx_chunk : nullptr,
                             w_grad ? &gw_chunk : nullptr, &packed_weight);
    if (x_grad && n == rows) {
      gx = gx_chunk;
    } else if (x_grad) {
      if (!gx.defined()) gx = Tensor::empty({rows, in_features}, x.dtype());
      gx.slice(0, begin, end).copy_(gx_chunk);
    }
    if (w_grad && gw.defined()) {
      gw.add_(gw_chunk);
    } else if (w_grad) {
      gw = gw_chunk;
    }
    if (b_grad && gb.defined()) {
      gb.add_(gb_chunk);
    } else if (b_grad) {
      gb = gb_chunk;
    }
  }
  if (x_grad && !gx.defined()) gx = Tensor::empty({rows, in_features}, x.dtype());
  if (w_grad && !gw.defined()) gw = Tensor::empty(weight.shape(), weight.dtype()).zero_();
  if (b_grad && !gb.defined()) gb = Tensor::empty({classes}, bias.dtype()).zero_();
  // No target counts: 0/0, a NaN, as cross_entropy and PyTorch report it.
  const double loss = count > 0 ? total / count : std::numeric_limits<double>::quiet_NaN();
  Tensor out = scalar_tensor(loss, x.dtype());
  if (predictions) *predictions = predicted.reshape(targets_in.shape());
  if (grad) {
    auto node = std::make_shared<LinearCrossEntropyBackward>();
    node->x_grad.save(x_grad ? gx.reshape(x.shape()) : Tensor());
    node->weight_grad.save(w_grad ? gw : Tensor());
    if (bias.defined()) {
      node->bias_grad.save(b_grad ? gb : Tensor());
      attach_node(out, node, {x, weight, bias});
    } else {
      attach_node(out, node, {x, weight});
    }
  }
  return out;
}

std::vector<Tensor> LinearCrossEntropyBackward::backward(const Tensor& g) {
  // The gradients of the mean loss were computed in forward; the chain rule scales them.
  const double upstream = g.item();
  SavedTensor* const computed[] = {&x_grad, &weight_grad, &bias_grad};
  std::vector<Tensor> grads;
  for (size_t i = 0; i < next_edges.size(); ++i) {
    Tensor t;
    if (next_edges[i]) {
      t = computed[i]->take();
      if (upstream != 1.0) {
        NoGradGuard no_grad;
        t = t.sole_owner() ? t : t.clone();
        t.mul_(upstream);
      }
    }
    grads.push_back(t);
  }
  return grads;
}

}  // namespace heed
