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

namespace {

void check_arguments(const Tensor& x, const Tensor& weight, const Tensor& bias,
                     const Tensor& targets, double label_smoothing, int64_t chunk_rows) {
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
  HEED_CHECK(targets.shape() == leading,
             "linear_cross_entropy: targets {} do not match the input's rows {}",
             targets.shape_str(), x.shape_str());
  HEED_CHECK(targets.dtype() == DType::i64 || targets.dtype() == DType::i32,
             "linear_cross_entropy: targets must be integer class ids, got {}", targets.dtype());
  HEED_CHECK(label_smoothing >= 0.0 && label_smoothing <= 1.0,
             "linear_cross_entropy: label_smoothing must be in [0, 1], got {}", label_smoothing);
  HEED_CHECK(chunk_rows >= 0, "linear_cross_entropy: chunk_rows must be >= 0, got {}", chunk_rows);
}

// The class ids, each checked against `classes`; *count receives how many count (are not
// ignore_index), the mean's divisor.
std::vector<int64_t> read_targets(const Tensor& targets_in, int64_t ignore_index, int64_t classes,
                                  int64_t* count) {
  std::vector<int64_t> targets = targets_in.to_vector<int64_t>();
  *count = 0;
  for (size_t r = 0; r < targets.size(); ++r) {
    if (targets[r] == ignore_index) continue;
    HEED_CHECK(targets[r] >= 0 && targets[r] < classes,
               "linear_cross_entropy: target {} at row {} is out of range for {} classes",
               targets[r], r, classes);
    ++*count;
  }
  return targets;
}

// How many chunks `rows` go in: of chunk_rows rows each, or with 0 as the op chooses.
int64_t chunk_count(int64_t rows, int64_t chunk_rows) {
  return chunk_rows > 0 ? (rows + chunk_rows - 1) / chunk_rows
                        : std::max<int64_t>(1, rows / kDefaultChunkRows);
}

// A chunk's logits [n, classes]: x_chunk . weight^T (+ bias), the weight packed once for all
// chunks in `packed_weight`.
Tensor chunk_logits(const Tensor& x_chunk, const Tensor& weight, const Tensor& bias,
                    PackedOperands* packed_weight) {
  const int64_t n = x_chunk.size(0), classes = weight.size(0), in_features = weight.size(1);
  Tensor logits = Tensor::empty({n, classes}, weight.dtype());
  if (classes > 0 && in_features > 0) {
    matmul_into(x_chunk, weight.transpose(0, 1), bias, logits, /*pack_b=*/true, packed_weight);
  } else if (bias.defined()) {
    logits.copy_(expand(bias, {n, classes}));  // no features: the bias alone
  } else {
    logits.zero_();
  }
  return logits;
}

// One pass over a chunk's logits [n, classes], row by row while each row is in cache: adds the
// rows' losses to *total in row order and, with options.gradient, writes the logits' gradient
// over them, or only its bf16 rounding into `rounded` when that is defined (what bf16 products
// read). `targets` and `predictions` (if not null) start at the chunk's first row. Returns the
// bias gradient's sums over the chunk with `bias_grad`, else an undefined tensor.
Tensor chunk_pass(const Tensor& logits, const int64_t* targets,
                  const CrossEntropyRowOptions& options, const Tensor& rounded, bool bias_grad,
                  int64_t* predictions, double* total) {
  const int64_t n = logits.size(0), classes = logits.size(1);
  std::vector<double> row_loss(n, 0.0);
  Tensor gb_chunk;
  dispatch_float(logits.dtype(), "linear_cross_entropy", [&]<typename T>() {
    T* l = logits.data<T>();
    // Row r's loss, and with `rounded_row` its gradient's bf16 rounding alone (else the f32
    // gradient over the logits).
    const auto row_pass = [&](int64_t r, bf16* rounded_row) {
      int64_t* prediction = predictions ? predictions + r : nullptr;
      row_loss[r] = kernels::cross_entropy_row(l + r * classes, classes, targets[r], options,
                                               rounded_row, prediction);
    };
    if (bias_grad) {
      // The bias gradient sums the f32 gradient's rows while each is in cache (as
      // LinearBackward's bias sums do), rounding it for the products in the same pass.
      gb_chunk = sum_gradient_rows<T>(
          n, classes,
          [&](int64_t r, T*) {
            row_pass(r, nullptr);
            return static_cast<const T*>(l + r * classes);
          },
          [&](int64_t r, const T* row) {
            if (rounded.defined()) write_rounded_row(rounded, r, row);
          });
      return;
    }
    parallel_for(n, classes, [&](int64_t r) {
      row_pass(r, rounded.defined() ? rounded.data<bf16>() + r * classes : nullptr);
    });
  });
  for (double v : row_loss) *total += v;
  return gb_chunk;
}

// The gradients of the loss, gathered over the chunks; each only where its input requires it.
struct GatheredGradients {
  bool want_x = false, want_weight = false, want_bias = false;
  Tensor gx;      // the single chunk's own, or the chunks' written into one [rows, in] tensor
  Tensor gw, gb;  // the first chunk's, then the sums over the chunks

  // Adds the gradients of rows [begin, end) of `rows`.
  void add(int64_t begin, int64_t end, int64_t rows, const Tensor& gx_chunk, const Tensor& gw_chunk,
           const Tensor& gb_chunk) {
    if (want_x && end - begin == rows) {
      gx = gx_chunk;
    } else if (want_x) {
      if (!gx.defined()) gx = Tensor::empty({rows, gx_chunk.size(1)}, gx_chunk.dtype());
      gx.slice(0, begin, end).copy_(gx_chunk);
    }
    if (want_weight && gw.defined()) {
      gw.add_(gw_chunk);
    } else if (want_weight) {
      gw = gw_chunk;
    }
    if (want_bias && gb.defined()) {
      gb.add_(gb_chunk);
    } else if (want_bias) {
      gb = gb_chunk;
    }
  }

  // The wanted gradients that no chunk gave (there were no rows): the input's, which has no
  // elements, and zeros for the weight's and the bias's.
  void fill_missing(int64_t rows, const Tensor& weight) {
    if (want_x && !gx.defined()) gx = Tensor::empty({rows, weight.size(1)}, weight.dtype());
    if (want_weight && !gw.defined()) gw = Tensor::empty(weight.shape(), weight.dtype()).zero_();
    if (want_bias && !gb.defined()) gb = Tensor::empty({weight.size(0)}, weight.dtype()).zero_();
  }
};

// Makes a LinearCrossEntropyBackward holding the gathered gradients the grad_fn of `out`.
void record_backward(Tensor& out, const Tensor& x, const Tensor& weight, const Tensor& bias,
                     const GatheredGradients& gathered) {
  auto node = std::make_shared<LinearCrossEntropyBackward>();
  node->x_grad.save(gathered.want_x ? gathered.gx.reshape(x.shape()) : Tensor());
  node->weight_grad.save(gathered.want_weight ? gathered.gw : Tensor());
  if (bias.defined()) {
    node->bias_grad.save(gathered.want_bias ? gathered.gb : Tensor());
    attach_node(out, node, {x, weight, bias});
  } else {
    attach_node(out, node, {x, weight});
  }
}

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
  check_arguments(x, weight, bias, targets_in, label_smoothing, chunk_rows);
  const int64_t classes = weight.size(0), in_features = weight.size(1);
  const int64_t rows = targets_in.numel();
  int64_t count = 0;
  const std::vector<int64_t> targets = read_targets(targets_in, ignore_index, classes, &count);
  const bool grad = needs_grad({&x, &weight, &bias});
  GatheredGradients gathered{.want_x = grad && x.requires_grad(),
                             .want_weight = grad && weight.requires_grad(),
                             .want_bias = grad && bias.defined() && bias.requires_grad()};
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
  Tensor predicted = predictions ? Tensor::empty({rows}, DType::i64) : Tensor();

  const int64_t chunks = chunk_count(rows, chunk_rows);
  // Every chunk's products read the weight: packed once for the logits' products and once for
  // the input gradient's, not once per chunk. In bf16 from 512 rows (the masked-LM head's 640):
  // oneDNN's bf16 kernel reading the plain transposed weight ran BERT-mini's head at 375
  // GFLOP/s, packed at 552 (docs/performance_history.md).
  PackedOperands packed_weight(/*bf16_min_rows=*/512);
  double total = 0.0;
  for (int64_t k = 0; k < chunks && rows > 0; ++k) {
    const int64_t begin = rows * k / chunks, end = rows * (k + 1) / chunks, n = end - begin;
    if (n == 0) continue;
    const Tensor x_chunk = x_operand.slice(0, begin, end);
    Tensor logits = chunk_logits(x_chunk, weight, bias_operand, &packed_weight);
    // With bf16 products only the gradient's rounding is written (what both products read).
    const Tensor rounded =
        grad && bf16_products ? Tensor::empty({n, classes}, DType::bf16) : Tensor();
    const Tensor gb_chunk =
        chunk_pass(logits, targets.data() + begin, options, rounded, gathered.want_bias,
                   predictions ? predicted.data<int64_t>() + begin : nullptr, &total);
    if (!grad) continue;
    Tensor gx_chunk, gw_chunk;
    linear_gradient_products(rounded.defined() ? rounded : logits, x_chunk, weight,
                             WeightLayout::out_in, Shape{n, in_features},
                             gathered.want_x ? &gx_chunk : nullptr,
                             gathered.want_weight ? &gw_chunk : nullptr, &packed_weight);
    gathered.add(begin, end, rows, gx_chunk, gw_chunk, gb_chunk);
  }
  gathered.fill_missing(rows, weight);
  // No target counts: 0/0, a NaN, as cross_entropy and PyTorch report it.
  const double loss = count > 0 ? total / count : std::numeric_limits<double>::quiet_NaN();
  Tensor out = scalar_tensor(loss, x.dtype());
  if (predictions) *predictions = predicted.reshape(targets_in.shape());
  if (grad) record_backward(out, x, weight, bias, gathered);
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
