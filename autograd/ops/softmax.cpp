// softmax and log_softmax along a dim, and the fused attention softmax
// softmax(scores * scale + mask), with causal masking, that attention uses; with dropout after
// it in the same pass when training (attention_softmax_dropout).
#include <cmath>
#include <limits>

#include "autograd/kernels/dispatch.h"
#include "autograd/kernels/dropout_draws.h"
#include "autograd/kernels/fast_math.h"
#include "autograd/kernels/loop_hints.h"
#include "autograd/kernels/parallel.h"
#include "autograd/kernels/row_kernels.h"
#include "autograd/kernels/row_reduce.h"
#include "autograd/kernels/strided_loop.h"
#include "autograd/node.h"
#include "autograd/ops.h"
#include "autograd/ops/attention_softmax_rows.h"
#include "autograd/ops/elementwise.h"
#include "base/profile.h"

namespace heed {
namespace {

// Runs `f(rows, width)` on `a` with `dim` moved last (contiguous), and moves it back.
template <typename F>
Tensor along_last_dim(const Tensor& a, int64_t dim, const char* op, F f) {
  const int64_t d = wrap_dim(dim, a.dim(), op);
  if (d == a.dim() - 1 || a.dim() == 0) return f(a);
  return f(a.transpose(d, -1)).transpose(d, -1);
}

struct SoftmaxBackward : Node {
  double scale = 1.0;
  // attention_softmax with a distance bias: its gradient is the second.
  bool distance_bias = false;
  SavedTensor output{this};
  const char* name() const override { return "SoftmaxBackward"; }
  std::vector<Tensor> backward(const Tensor& g) override;
};

struct LogSoftmaxBackward : Node {
  SavedTensor output{this};
  const char* name() const override { return "LogSoftmaxBackward"; }
  std::vector<Tensor> backward(const Tensor& g_in) override;
};

struct AttentionSoftmaxDropoutBackward : Node {
  double scale = 1.0, p = 0.0;
  SavedTensor probs{this}, keep{this};  // the undropped probabilities and the keep bits
  const char* name() const override { return "AttentionSoftmaxDropoutBackward"; }
  std::vector<Tensor> backward(const Tensor& g) override;
};

Tensor softmax_last(const Tensor& a_in, bool log) {
  Tensor a = a_in.contiguous();
  const int64_t width = a.dim() ? a.size(-1) : 1;
  const int64_t rows = width ? a.numel() / width : 0;
  Tensor out = Tensor::empty(a.shape(), a.dtype());
  dispatch_float(a.dtype(), log ? "log_softmax" : "softmax", [&]<typename T>() {
    const T* x = a.data<T>();
    T* o = out.data<T>();
    parallel_for(rows, width, [&](int64_t r) {
      const T* xr = x + r * width;
      T* orow = o + r * width;
      const T m = rows::max(xr, width, -std::numeric_limits<T>::infinity());
      const T total = rows::sum_exp(xr, m, width);
      if (log) {
        const T lse = m + std::log(total);
        for (int64_t c = 0; c < width; ++c) orow[c] = xr[c] - lse;
      } else {
        const T inv = T(1) / total;
        for (int64_t c = 0; c < width; ++c) orow[c] = fast::exp_nonpositive(xr[c] - m) * inv;
      }
    });
  });
  if (needs_grad({&a_in})) {
    if (log) {
      auto node = std::make_shared<LogSoftmaxBackward>();
      node->output.save(out);
      attach_node(out, node, {a_in});
    } else {
      auto node = std::make_shared<SoftmaxBackward>();
      node->output.save(out);
      attach_node(out, node, {a_in});
    }
  }
  return out;
}

}  // namespace

Tensor softmax(const Tensor& a, int64_t dim) {
  return along_last_dim(a, dim, "softmax", [](const Tensor& t) { return softmax_last(t, false); });
}

Tensor log_softmax(const Tensor& a, int64_t dim) {
  return along_last_dim(a, dim, "log_softmax",
                        [](const Tensor& t) { return softmax_last(t, true); });
}

namespace {

// Row r of attention's scores [.., Tq, Tk] (contiguous) scaled, masked and turned into
// probabilities, for attention_softmax_rows.
template <typename T>
struct SoftmaxRows {
  const T* scores;
  T* probs;
  T scale;
  const Shape& shape;
  int64_t tq, tk;
  bool causal;
  // The mask, if any: additive (in T) or a u8 keep mask, with its strides broadcast to the
  // scores' shape.
  bool masked;
  const T* add_mask;
  const uint8_t* keep_mask;
  const Shape& mask_strides;
  // The distance bias [heads, tq + tk - 1], or null: score (q, k) of head h gains
  // distance_bias[h, k - q + tq - 1] before the scale.
  const T* distance_bias;
  int64_t heads;

  void run(int64_t r) const {
    const T* xr = scores + r * tk;
    T* orow = probs + r * tk;
    const int64_t q = r % tq;
    // Row q reads the bias's row from distance tq - 1 - q on, one key after another.
    const T* bias =
        distance_bias ? distance_bias + ((r / tq) % heads) * (tq + tk - 1) + (tq - 1 - q) : nullptr;
    // Keys after this query are cut off in causal mode (queries align to the last keys).
    const int64_t limit = causal ? std::min<int64_t>(tk, q + tk - tq + 1) : tk;
    int64_t mask_base = 0, mask_step = 0;
    if (masked) {
      const int64_t nd = static_cast<int64_t>(shape.size());
      int64_t rest = r;
      for (int64_t d = nd - 2; d >= 0; --d) {
        mask_base += (rest % shape[d]) * mask_strides[d];
        rest /= shape[d];
      }
      mask_step = mask_strides[nd - 1];
    }
    const bool padding_row = keep_mask && mask_step == 1;
    if (!bias && (padding_row || !masked)) {  // a select, vectorised; no mask: a scaling
      kernels::scale_and_mask(xr, padding_row ? keep_mask + mask_base : nullptr, scale, limit,
                              orow);
    } else {
      const T neg_inf = -std::numeric_limits<T>::infinity();
      for (int64_t c = 0; c < limit; ++c) {
        T v = (bias ? xr[c] + bias[c] : xr[c]) * scale;
        if (add_mask) v += add_mask[mask_base + c * mask_step];
        if (keep_mask && !keep_mask[mask_base + c * mask_step]) v = neg_inf;
        orow[c] = v;
      }
    }
    // All zeros when every key is removed: no attention at all.
    kernels::softmax_row(orow, limit, tk);
  }
};

// Dropout over rows [r0, r1) of the probabilities (probs_rows: row r0 on) of width tk: the
// draws dropout() takes for their elements r0 * tk ..., a row of keep bits each into `kept`,
// the dropped values into `dropped` or, when that is null, rounded into `dropped_bf16`. Short
// rows go many to a call (G2P's have 6-12 keys, the encoder-decoder benchmark's 32): one
// Philox call and one bf16 rounding then serve them all, where row by row each paid for its
// own (and for the scalar Philox path under one vector's worth of blocks).
template <typename T>
void dropout_rows(const RowDropout& drop, int64_t tk, int64_t r0, int64_t r1, const T* probs_rows,
                  T* dropped, bf16* dropped_bf16, uint8_t* kept) {
  const uint32_t threshold = dropout_threshold(drop.p);
  const T inv_keep = static_cast<T>(1.0 / (1.0 - drop.p));
  uint16_t draws[kMaxDropoutDraws];
  T unrounded[kMaxDropoutDraws];  // the dropped values before their bf16 rounding
  // A chunk is whole rows, or a piece of one row longer than a chunk; a row of its own
  // when rows draw from other rows' counters.
  const int64_t rows_per_chunk =
      drop.counter_rows ? 1 : std::max<int64_t>(1, kMaxDropoutDraws / tk);
  for (int64_t c0 = r0 * tk, end = r1 * tk; c0 < end;) {
    const int64_t row = c0 / tk, col = c0 % tk;
    const int64_t count = col > 0 || tk > kMaxDropoutDraws
                              ? std::min(tk - col, kMaxDropoutDraws)
                              : std::min(r1 - row, rows_per_chunk) * tk;
    const int64_t counter = drop.counter_rows ? drop.counter_rows[row] * tk + col : c0;
    dropout_draws(drop.seed, drop.offset, counter, count, draws);
    const T* in = probs_rows + (c0 - r0 * tk);
    for (int64_t i = 0; i < count;) {  // each row's piece of the chunk: its own keep bits
      const int64_t r = (c0 + i) / tk, c = (c0 + i) % tk, n = std::min(tk - c, count - i);
      uint8_t* keep_bits = kept + r * keep_mask_bytes(tk) + c / 8;
      T* out = dropped != nullptr ? dropped + c0 + i : unrounded + i;
      apply_dropout_draws<T>(draws + i, n, threshold, inv_keep, in + i, out, keep_bits);
      i += n;
    }
    // Rounded as the product's own conversion would round them.
    if (dropped_bf16) kernels::round_to_bf16(unrounded, count, dropped_bf16 + c0);
    c0 += count;
  }
}

// The mask's strides broadcast to the scores' shape, after checking its type and shape.
Shape mask_strides_for(const Tensor& mask, const Tensor& scores) {
  HEED_CHECK(mask.dtype() == DType::u8 || mask.dtype() == scores.dtype(),
             "attention_softmax: mask must be u8 (1 = attend) or {} like the scores, got {}",
             scores.dtype(), mask.dtype());
  HEED_CHECK(
      broadcast_shapes(mask.shape(), scores.shape(), "attention_softmax (mask)") == scores.shape(),
      "attention_softmax: mask {} does not broadcast to scores {}", mask.shape_str(),
      scores.shape_str());
  return broadcast_strides(mask, scores.shape());
}

void check_distance_bias(const Tensor& bias, const Tensor& scores) {
  HEED_CHECK(scores.dim() >= 3 && bias.dim() == 2 && bias.size(0) == scores.size(-3) &&
                 bias.size(1) == scores.size(-2) + scores.size(-1) - 1,
             "attention_softmax: distance bias {} must be [heads, Tq + Tk - 1] for scores {} "
             "[.., heads, Tq, Tk]",
             bias.shape_str(), scores.shape_str());
  HEED_CHECK(bias.dtype() == scores.dtype(),
             "attention_softmax: distance bias is {}, the scores {}", bias.dtype(), scores.dtype());
}

}  // namespace

Tensor distance_bias_gradient(const Tensor& g_scores_in, int64_t heads) {
  Tensor g = g_scores_in.contiguous();
  const int64_t tq = g.size(-2), tk = g.size(-1), width = tq + tk - 1;
  const int64_t planes = tq > 0 && tk > 0 ? g.numel() / (tq * tk) : 0;
  Tensor out = Tensor::empty({heads, width}, g.dtype());
  dispatch_float(g.dtype(), "distance bias backward", [&]<typename T>() {
    const T* gp = g.data<T>();
    T* o = out.data<T>();
    // One head per task, its sums in double over the batch in order: the same bits for any
    // thread count.
    parallel_for(heads, planes / std::max<int64_t>(heads, 1) * tq * tk, [&](int64_t h) {
      std::vector<double> sums(static_cast<size_t>(width), 0.0);
      for (int64_t p = h; p < planes; p += heads) {
        const T* plane = gp + p * tq * tk;
        for (int64_t q = 0; q < tq; ++q) {
          double* row = sums.data() + (tq - 1 - q);
          for (int64_t k = 0; k < tk; ++k) row[k] += plane[q * tk + k];
        }
      }
      for (int64_t d = 0; d < width; ++d) o[h * width + d] = static_cast<T>(sums[d]);
    });
  });
  return out;
}

Tensor attention_softmax_rows(const Tensor& scores_in, double scale, const Tensor& mask,
                              bool causal, const RowDropout* drop, Tensor* probs, Tensor* keep,
                              const Tensor& distance_bias_in) {
  HEED_CHECK(scores_in.dim() >= 2, "attention_softmax: scores must be [.., Tq, Tk], got {}",
             scores_in.shape_str());
  Tensor scores = scores_in.contiguous();
  const Shape& shape = scores.shape();
  const int64_t nd = scores.dim();
  const int64_t tq = shape[nd - 2], tk = shape[nd - 1];
  const int64_t rows = tk ? scores.numel() / tk : 0;
  const Shape mask_strides = mask.defined() ? mask_strides_for(mask, scores) : Shape();
  const bool bool_mask = mask.defined() && mask.dtype() == DType::u8;
  if (distance_bias_in.defined()) check_distance_bias(distance_bias_in, scores);
  const Tensor distance_bias =
      distance_bias_in.defined() ? distance_bias_in.contiguous() : Tensor();
  Tensor out = Tensor::empty(shape, scores.dtype());
  Tensor dropped = out;
  uint8_t* kept = nullptr;
  if (drop) {
    const bool to_bf16 = drop->bf16_output && scores.dtype() == DType::f32;
    dropped = Tensor::empty(shape, to_bf16 ? DType::bf16 : scores.dtype());
    *keep = Tensor::empty({rows, keep_mask_bytes(tk)}, DType::u8);  // a row of bits per row
    kept = keep->data<uint8_t>();
  }
  dispatch_float(scores.dtype(), "attention_softmax", [&]<typename T>() {
    T* o = out.data<T>();
    T* dropped_data = dropped.dtype() == scores.dtype() ? dropped.data<T>() : nullptr;
    bf16* dropped_bf16 = dropped.dtype() == DType::bf16 ? dropped.data<bf16>() : nullptr;
    const SoftmaxRows<T> softmax_rows{
        .scores = scores.data<T>(),
        .probs = o,
        .scale = static_cast<T>(scale),
        .shape = shape,
        .tq = tq,
        .tk = tk,
        .causal = causal,
        .masked = mask.defined(),
        .add_mask = mask.defined() && !bool_mask ? mask.data<T>() : nullptr,
        .keep_mask = bool_mask ? mask.data<uint8_t>() : nullptr,
        .mask_strides = mask_strides,
        .distance_bias = distance_bias.defined() ? distance_bias.data<T>() : nullptr,
        .heads = distance_bias.defined() ? distance_bias.size(0) : 1};
    // Groups of about 1,024 elements: enough rows to fill a Philox call, and enough groups
    // that the threads share them evenly. With dropout an element costs an exp, a share of a
    // Philox block and a bf16 rounding: G2P's short-sequence calls in training (a few thousand
    // to 30,000 elements) pay for the second thread. Without it (evaluation, decoding) the
    // grain is as for any loop: not measured otherwise.
    parallel_for_row_groups(
        rows, tk, 1024,
        [&](int64_t r0, int64_t r1) {
          for (int64_t r = r0; r < r1; ++r) softmax_rows.run(r);
          if (drop) {
            dropout_rows<T>(*drop, tk, r0, r1, o + r0 * tk, dropped_data, dropped_bf16, kept);
          }
        },
        /*cost_per_element=*/drop ? 8 : 1);
  });
  if (probs) *probs = out;
  return dropped;
}

Tensor attention_softmax(const Tensor& scores, double scale, const Tensor& mask, bool causal,
                         const Tensor& distance_bias) {
  OpTimer timer("attention_softmax");
  Tensor out =
      attention_softmax_rows(scores, scale, mask, causal, nullptr, nullptr, nullptr, distance_bias);
  const bool biased = distance_bias.defined();
  if (biased ? needs_grad({&scores, &distance_bias}) : needs_grad({&scores})) {
    auto node = std::make_shared<SoftmaxBackward>();
    node->scale = scale;
    node->distance_bias = biased;
    node->output.save(out);
    attach_node(out, node,
                biased ? std::vector<Tensor>{scores, distance_bias} : std::vector<Tensor>{scores});
  }
  return out;
}

Tensor attention_softmax_dropout(const Tensor& scores, double scale, const Tensor& mask,
                                 bool causal, double p, Generator& generator, Tensor* probs) {
  OpTimer timer("attention_softmax_dropout");
  HEED_CHECK(p >= 0.0 && p < 1.0,
             "attention_softmax_dropout: probability must be in [0, 1), got {}", p);
  if (p == 0.0) {
    Tensor out = attention_softmax(scores, scale, mask, causal);
    if (probs) *probs = out;
    return out;
  }
  const RowDropout drop{p, generator.seed(),
                        generator.reserve_blocks(dropout_blocks(scores.numel()))};
  Tensor y, keep;
  Tensor out = attention_softmax_rows(scores, scale, mask, causal, &drop, &y, &keep);
  if (probs) *probs = y;
  if (needs_grad({&scores})) {
    auto node = std::make_shared<AttentionSoftmaxDropoutBackward>();
    node->scale = scale;
    node->p = p;
    node->probs.save(y);
    node->keep.save(keep);
    attach_node(out, node, {scores});
  }
  return out;
}

std::vector<Tensor> SoftmaxBackward::backward(const Tensor& g) {
  const Tensor y = output.get();
  Tensor gx = attention_softmax_backward(g, y, scale);
  if (!distance_bias) return {gx};
  // The bias joins the scores before the scale: its gradient is theirs, summed per distance.
  Tensor g_bias = next_edges[1] ? distance_bias_gradient(gx, y.size(-3)) : Tensor();
  return {gx, g_bias};
}

std::vector<Tensor> LogSoftmaxBackward::backward(const Tensor& g_in) {
  const Tensor y = output.get();
  Tensor g = g_in.contiguous();
  const int64_t width = y.size(-1), rows = width ? y.numel() / width : 0;
  Tensor gx = Tensor::empty(y.shape(), y.dtype());
  dispatch_float(y.dtype(), "log_softmax backward", [&]<typename T>() {
    const T* gp = g.data<T>();
    const T* yp = y.data<T>();
    T* o = gx.data<T>();
    parallel_for(rows, width, [&](int64_t r) {
      const T* gr = gp + r * width;
      T total = 0;
      for (int64_t c = 0; c < width; ++c) total += gr[c];
      for (int64_t c = 0; c < width; ++c) {
        o[r * width + c] = gr[c] - fast::exp_nonpositive(yp[r * width + c]) * total;
      }
    });
  });
  return {gx};
}

std::vector<Tensor> AttentionSoftmaxDropoutBackward::backward(const Tensor& g) {
  return {attention_softmax_dropout_backward(g, probs.get(), keep.get(), scale, p)};
}

Tensor attention_softmax_backward(const Tensor& g_in, const Tensor& y, double scale) {
  // Row by row, each element of g is read before it is written: in place when possible.
  Tensor gx = reusable_gradient(g_in, y.shape());
  Tensor g = g_in.contiguous();
  const int64_t width = y.size(-1), rows = width ? y.numel() / width : 0;
  dispatch_float(y.dtype(), "softmax backward", [&]<typename T>() {
    const T* gp = g.data<T>();
    const T* yp = y.data<T>();
    T* o = gx.data<T>();
    const T s = static_cast<T>(scale);
    parallel_for(rows, width, [&](int64_t r) {
      const T* gr = gp + r * width;
      const T* yr = yp + r * width;
      const T dot = rows::dot(gr, yr, width);
      T* orow = o + r * width;
      HEED_ASSUME_NO_LOOP_ALIAS  // orow is gr or apart from it: element c is read, then written
          for (int64_t c = 0; c < width; ++c) orow[c] = s * yr[c] * (gr[c] - dot);
    });
  });
  return gx;
}

// gx = scale * y * (gy - sum(gy * y)) per row with gy = g * keep / (1 - p): the backward of
// dropout after softmax, in one pass.
Tensor attention_softmax_dropout_backward(const Tensor& g_in, const Tensor& y, const Tensor& keep,
                                          double scale, double p) {
  // Row by row, each element of g is read before it is written: in place when possible.
  Tensor gx = reusable_gradient(g_in, y.shape());
  Tensor g = g_in.contiguous();
  const int64_t width = y.size(-1), rows = width ? y.numel() / width : 0;
  const int64_t row_bytes = keep_mask_bytes(width);
  const uint8_t* k = keep.data<uint8_t>();
  dispatch_float(y.dtype(), "attention softmax dropout backward", [&]<typename T>() {
    const T* gp = g.data<T>();
    const T* yp = y.data<T>();
    T* o = gx.data<T>();
    const T s = static_cast<T>(scale), inv_keep = static_cast<T>(1.0 / (1.0 - p));
    parallel_for(rows, width, [&](int64_t r) {
      const T* gr = gp + r * width;
      const T* yr = yp + r * width;
      T* orow = o + r * width;
      apply_keep_bits<T>(k + r * row_bytes, width, inv_keep, gr, orow);  // gy, in the output
      const T dot = rows::dot(static_cast<const T*>(orow), yr, width);
      for (int64_t c = 0; c < width; ++c) orow[c] = s * yr[c] * (orow[c] - dot);
    });
  });
  return gx;
}

}  // namespace heed
