// Attention's dropped probabilities times the values, as one op whose backward recomputes the
// dropped probabilities (from the undropped ones and the keep bits, which the softmax's
// backward needs anyway) instead of holding them from forward to backward: one [B, h, Tq, Tk]
// tensor less per layer in memory at the end of forward (8 MB per BERT-small layer in f32).
#include <algorithm>
#include <vector>

#include "autograd/grad_mode.h"
#include "autograd/kernels/dispatch.h"
#include "autograd/kernels/dropout_draws.h"
#include "autograd/kernels/parallel.h"
#include "autograd/kernels/row_kernels.h"
#include "autograd/node.h"
#include "autograd/ops.h"
#include "autograd/ops/attention_softmax_rows.h"
#include "autograd/ops/matmul_impl.h"
#include "base/profile.h"

namespace heed {

namespace {

struct AttentionDropoutValuesBackward : Node {
  double scale = 1.0, p = 0.0;
  bool distance_bias = false;  // its gradient is the third
  DType v_dtype = DType::f32;  // of v as given (`values` may be its bf16 copy)
  // The undropped probabilities, the keep bits and the values as the product read them.
  SavedTensor probs{this}, keep_bits{this}, values{this};
  const char* name() const override { return "AttentionDropoutValuesBackward"; }
  std::vector<Tensor> backward(const Tensor& g_in) override;
};

}  // namespace

std::vector<int64_t> picked_query_counter_rows(const QueryRows& queries, int64_t batch,
                                               int64_t heads, int64_t picked) {
  const Tensor& positions = queries.positions;
  HEED_CHECK(positions.dtype() == DType::i64 && positions.dim() == 2 &&
                 positions.size(0) == batch && positions.size(1) == picked,
             "attention: query positions {} ({}) must be i64 [B, Q] = [{}, {}]",
             positions.shape_str(), positions.dtype(), batch, picked);
  const std::vector<int64_t> at = positions.to_vector<int64_t>();
  std::vector<int64_t> rows(static_cast<size_t>(batch * heads * picked));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t j = 0; j < picked; ++j) {
      const int64_t position = at[static_cast<size_t>(b * picked + j)];
      HEED_CHECK(position >= 0 && position < queries.sequence_length,
                 "attention: query position {} outside a sequence of {}", position,
                 queries.sequence_length);
      for (int64_t h = 0; h < heads; ++h) {
        rows[static_cast<size_t>((b * heads + h) * picked + j)] =
            (b * heads + h) * queries.sequence_length + position;
      }
    }
  }
  return rows;
}

Tensor attention_dropout_values(const Tensor& scores, const Tensor& v, double scale,
                                const Tensor& mask, bool causal, double p, Generator& generator,
                                Tensor* probs, const QueryRows* queries,
                                const Tensor& distance_bias) {
  OpTimer timer("attention_dropout_values");
  HEED_CHECK(p >= 0.0 && p < 1.0, "attention_dropout_values: probability must be in [0, 1), got {}",
             p);
  HEED_CHECK(scores.dim() >= 2 && v.dim() == scores.dim() && v.size(-2) == scores.size(-1) &&
                 std::equal(v.shape().begin(), v.shape().end() - 2, scores.shape().begin()),
             "attention_dropout_values: scores {} and values {} must be [.., Tq, Tk] and "
             "[.., Tk, d] with the same leading dims",
             scores.shape_str(), v.shape_str());
  HEED_CHECK(!queries || !distance_bias.defined(),
             "attention_dropout_values: a distance bias needs every query (no picked rows)");
  HEED_CHECK(!queries || (!causal && scores.dim() == 4),
             "attention_dropout_values: picked queries need scores [B, h, Q, Tk], not causal");
  const std::vector<int64_t> counter_rows =
      queries ? picked_query_counter_rows(*queries, scores.size(0), scores.size(1), scores.size(2))
              : std::vector<int64_t>();
  if (p == 0.0) {
    Tensor y = attention_softmax(scores, scale, mask, causal, distance_bias);
    if (probs) *probs = y;
    return matmul(y, v);
  }
  const bool bf16_product = v.dtype() == DType::f32 && matmul_precision() == MatmulPrecision::bf16;
  // The stream of all the queries' scores, as much as attention over all of them reserves.
  const int64_t stream_elements =
      queries ? scores.size(0) * scores.size(1) * queries->sequence_length * scores.size(3)
              : scores.numel();
  const RowDropout drop{p, generator.seed(),
                        generator.reserve_blocks(dropout_blocks(stream_elements)), bf16_product,
                        queries ? counter_rows.data() : nullptr};
  Tensor y, keep, out, v_operand = v;
  {
    NoGradGuard no_grad;
    Tensor dropped =
        attention_softmax_rows(scores, scale, mask, causal, &drop, &y, &keep, distance_bias);
    // As matmul would: a bf16 product rounds v once, and backward reuses that copy.
    if (bf16_product) v_operand = to_bf16_keep_layout(v);
    out = matmul(dropped, v_operand);
  }
  if (probs) *probs = y;
  const bool biased = distance_bias.defined();
  if (biased ? needs_grad({&scores, &v, &distance_bias}) : needs_grad({&scores, &v})) {
    auto node = std::make_shared<AttentionDropoutValuesBackward>();
    node->scale = scale;
    node->p = p;
    node->distance_bias = biased;
    node->v_dtype = v.dtype();
    node->probs.save(y);
    node->keep_bits.save(keep);
    node->values.save_copy_of(v_operand, v);
    attach_node(
        out, node,
        biased ? std::vector<Tensor>{scores, v, distance_bias} : std::vector<Tensor>{scores, v});
  }
  return out;
}

std::vector<Tensor> AttentionDropoutValuesBackward::backward(const Tensor& g_in) {
  const Tensor y = probs.get(), keep = keep_bits.get(), v = values.get();
  const bool bf16 = v.dtype() == DType::bf16;
  // Both products read g: round it once when they run in bf16.
  Tensor g = bf16 && g_in.dtype() == DType::f32 ? to_bf16_keep_layout(g_in) : g_in;
  Tensor g_scores, g_v;
  if (next_edges[1]) {
    // d(dropped . v)/dv = dropped^T . g; the dropped probabilities live only for this product.
    g_v = matmul(recompute_dropped(y, keep, p, bf16).transpose(-1, -2), g);
    if (g_v.dtype() != v_dtype) g_v = g_v.to(v_dtype);
  }
  const bool bias_gradient = distance_bias && next_edges[2];
  if (next_edges[0] || bias_gradient) {
    g_scores =
        attention_softmax_dropout_backward(matmul(g, v.transpose(-1, -2)), y, keep, scale, p);
  }
  if (!distance_bias) return {g_scores, g_v};
  // The bias joins the scores before the scale: its gradient is theirs, summed per distance.
  Tensor g_bias = bias_gradient ? distance_bias_gradient(g_scores, y.size(-3)) : Tensor();
  return {next_edges[0] ? g_scores : Tensor(), g_v, g_bias};
}

Tensor recompute_dropped(const Tensor& y, const Tensor& keep, double p, bool to_bf16) {
  const int64_t width = y.size(-1), rows = width ? y.numel() / width : 0;
  const int64_t row_bytes = keep_mask_bytes(width);
  const uint8_t* bits = keep.data<uint8_t>();
  Tensor out = Tensor::empty(y.shape(), to_bf16 ? DType::bf16 : y.dtype());
  dispatch_float(y.dtype(), "attention dropout recompute", [&]<typename T>() {
    const T* yp = y.data<T>();
    const T inv_keep = static_cast<T>(1.0 / (1.0 - p));
    if (to_bf16) {  // only f32 is rounded for bf16 products
      // Through a buffer in L1, as many short rows at a time as it holds (one rounding call
      // for them all), or a long row in pieces; a piece starts on a byte of bits.
      constexpr int64_t kBuffer = 1024;
      parallel_for_row_groups(rows, width, kBuffer, [&](int64_t r0, int64_t r1) {
        T dropped[kBuffer];
        bf16* o = out.data<bf16>();
        if (width <= kBuffer) {
          for (int64_t r = r0; r < r1; ++r) {
            apply_keep_bits<T>(bits + r * row_bytes, width, inv_keep, yp + r * width,
                               dropped + (r - r0) * width);
          }
          kernels::round_to_bf16(dropped, (r1 - r0) * width, o + r0 * width);
          return;
        }
        for (int64_t c0 = 0; c0 < width; c0 += kBuffer) {
          const int64_t n = std::min(kBuffer, width - c0);
          apply_keep_bits<T>(bits + r0 * row_bytes + c0 / 8, n, inv_keep, yp + r0 * width + c0,
                             dropped);
          kernels::round_to_bf16(dropped, n, o + r0 * width + c0);
        }
      });
      return;
    }
    parallel_for(rows, width, [&](int64_t r) {
      apply_keep_bits<T>(bits + r * row_bytes, width, inv_keep, yp + r * width,
                         out.data<T>() + r * width);
    });
  });
  return out;
}

}  // namespace heed
