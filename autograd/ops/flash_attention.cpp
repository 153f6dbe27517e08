// flash_attention: attention in tiles with an online softmax (FlashAttention-2, Dao 2023),
// forward and backward. A query tile meets the key tiles one after another; each query row keeps
// its running maximum m and sum l of exp(score - m), rescales what it has gathered of the values
// when m grows, and divides by l at the end. Only the output and each row's log-sum-exp
// (m + log l) are saved: backward recomputes the probabilities tile by tile as
// exp(score - lse), and with D = rowsum(dO * O) the scores' gradient is P * (dP - D). Nothing of
// size [Tq, Tk] is made in either direction: a layer's attention holds O(B h T) memory, not
// the unfused path's [B, h, Tq, Tk] probabilities (3.2 GB a BERT-base layer at 8,192 tokens).
//
// The numbers are those of attention_dropout_values over scores q . k^T: the same masks
// (padding, causal with the queries aligned to the last keys), the same distance bias added
// before the scale, the same dropped elements (dropout draws by the counter of element (row,
// key) of the [B, h, Tq, Tk] probabilities, from the same reserved stream), and under bf16
// products q, k, v, dO and dS rounded to bf16 as the unfused products round them. The
// probabilities alone stay f32 (the unfused path rounds them for its products): backward's
// D = rowsum(dO * O) must be the sum over the same P that dS = P * (dP - D) multiplies, or each
// row of dS loses its zero sum, and the error, alike in every key of a row, adds up in the query
// and key gradients instead of averaging out (with the probabilities rounded, the tiny T5 of
// tests/nn/fused_attention_test.cpp got a decoder key gradient 1.5x as far from the f32 one as
// the unfused path's). Saturated softmaxes make this choice sensitive, though: on the T5 v1.0
// PyTorch fixture under HEED_ATTENTION=fused it goes the other way (its first block's query
// gradient 5.3% of its largest off with f32 probabilities, 0.7% with rounded ones and 1.0% on
// the unfused path; the bf16 tests allow 3%).
// Sums run in another order, so the results agree within rounding, not bit for bit (the
// dropout mask does agree bit for bit).
//
// Forward parallelises over (batch, head, query tile); backward over (batch, head), each task
// owning its head's query, key and value gradients (12 heads or more keep 2 cores busy; a task
// per key tile would have to sum dQ across tasks).
#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <vector>

#include "autograd/grad_mode.h"
#include "autograd/kernels/attention_tiles.h"
#include "autograd/kernels/dispatch.h"
#include "autograd/kernels/dropout_draws.h"
#include "autograd/kernels/fast_math.h"
#include "autograd/kernels/parallel.h"
#include "autograd/node.h"
#include "autograd/ops.h"
#include "autograd/ops/attention_softmax_rows.h"
#include "base/profile.h"

#include "autograd/ops/flash_attention_tiles.h"

namespace heed {
namespace {

using namespace flash_attention_tiles;

// A tensor with a unit last stride, as the tiles read it.
Tensor rows_readable(const Tensor& t) {
  return t.stride(-1) == 1 ? t : t.contiguous();
}

struct FlashAttentionBackward : Node {
  double scale = 1.0;
  bool causal = false, round = false, biased = false;
  double p = 0.0;
  uint64_t seed = 0, offset = 0;
  std::vector<int64_t> counter_rows;
  SavedTensor q{this}, k{this}, v{this}, out{this}, lse{this}, keep{this}, bias{this};
  const char* name() const override { return "FlashAttentionBackward"; }
  std::vector<Tensor> backward(const Tensor& g_in) override;
};

template <typename T>
Problem<T> make_problem(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& keep,
                        bool causal, const Tensor& bias, double scale, double p, uint64_t seed,
                        uint64_t offset, const std::vector<int64_t>& counter_rows, bool round) {
  Problem<T> pb{.batch = q.size(0),
                .heads = q.size(1),
                .tq = q.size(2),
                .tk = k.size(2),
                .d = q.size(3),
                .dp = padded_to_lanes(q.size(3)),
                .q = {q.data<T>(), q.stride(0), q.stride(1), q.stride(2)},
                .k = {k.data<T>(), k.stride(0), k.stride(1), k.stride(2)},
                .v = {v.data<T>(), v.stride(0), v.stride(1), v.stride(2)}};
  if (keep.defined()) {
    pb.keep = keep.data<uint8_t>();
    pb.keep_batch_stride = keep.size(0) == 1 ? 0 : keep.stride(0);
  }
  pb.causal = causal;
  pb.bias = bias.defined() ? bias.data<T>() : nullptr;
  pb.scale = static_cast<T>(scale);
  pb.round = round;
  if (p > 0.0) {
    pb.dropout = true;
    pb.threshold = dropout_threshold(p);
    pb.inv_keep = static_cast<T>(1.0 / (1.0 - p));
    pb.seed = seed;
    pb.offset = offset;
    pb.counter_rows = counter_rows.empty() ? nullptr : counter_rows.data();
  }
  return pb;
}

void check_inputs(const Tensor& q, const Tensor& k, const Tensor& v,
                  const FlashAttentionOptions& o) {
  HEED_CHECK(q.dim() == 4 && k.dim() == 4 && v.dim() == 4 && q.size(0) == k.size(0) &&
                 q.size(1) == k.size(1) && k.shape() == v.shape() && q.size(3) == k.size(3),
             "flash_attention: q {}, k {}, v {} must be [B, h, Tq, d], [B, h, Tk, d] twice",
             q.shape_str(), k.shape_str(), v.shape_str());
  HEED_CHECK(q.dtype() == k.dtype() && q.dtype() == v.dtype() &&
                 (q.dtype() == DType::f32 || q.dtype() == DType::f64),
             "flash_attention: q, k, v must be all f32 or all f64, got {}, {}, {}", q.dtype(),
             k.dtype(), v.dtype());
  const int64_t B = q.size(0), heads = q.size(1), tq = q.size(2), tk = k.size(2);
  const Tensor& keep = o.key_padding;
  HEED_CHECK(!keep.defined() || (keep.dtype() == DType::u8 && keep.dim() == 2 &&
                                 (keep.size(0) == B || keep.size(0) == 1) && keep.size(1) == tk),
             "flash_attention: key padding {} ({}) must be u8 [B, Tk] = [{}, {}]",
             keep.defined() ? keep.shape_str() : "", keep.defined() ? keep.dtype() : DType::u8, B,
             tk);
  const Tensor& bias = o.distance_bias;
  HEED_CHECK(!bias.defined() || (bias.dim() == 2 && bias.size(0) == heads &&
                                 bias.size(1) == tq + tk - 1 && bias.dtype() == q.dtype()),
             "flash_attention: distance bias {} must be {} [heads, Tq + Tk - 1] = [{}, {}]",
             bias.defined() ? bias.shape_str() : "", q.dtype(), heads, tq + tk - 1);
  HEED_CHECK(o.dropout_p >= 0.0 && o.dropout_p < 1.0,
             "flash_attention: dropout must be in [0, 1), got {}", o.dropout_p);
  HEED_CHECK(o.dropout_p == 0.0 || o.generator != nullptr,
             "flash_attention: dropout needs a generator");
  HEED_CHECK(!o.queries || (!o.causal && !bias.defined()),
             "flash_attention: picked queries are neither causal nor biased by distance");
}

}  // namespace

Tensor flash_attention(const Tensor& q_in, const Tensor& k_in, const Tensor& v_in, double scale,
                       const FlashAttentionOptions& o) {
  OpTimer timer("flash_attention");
  check_inputs(q_in, k_in, v_in, o);
  const Tensor q = rows_readable(q_in), k = rows_readable(k_in), v = rows_readable(v_in);
  const Tensor keep = o.key_padding.defined() ? o.key_padding.contiguous() : Tensor();
  const Tensor bias = o.distance_bias.defined() ? o.distance_bias.contiguous() : Tensor();
  const int64_t B = q.size(0), heads = q.size(1), tq = q.size(2), tk = k.size(2), d = q.size(3);
  const bool round = q.dtype() == DType::f32 && matmul_precision() == MatmulPrecision::bf16;
  std::vector<int64_t> counter_rows;
  uint64_t seed = 0, offset = 0;
  if (o.dropout_p > 0.0) {
    if (o.queries) counter_rows = picked_query_counter_rows(*o.queries, B, heads, tq);
    // As much of the stream as attention_dropout_values reserves for these scores.
    const int64_t stream_rows = o.queries ? o.queries->sequence_length : tq;
    seed = o.generator->seed();
    offset = o.generator->reserve_blocks(dropout_blocks(B * heads * stream_rows * tk));
  }
  Tensor out = empty_heads(B, heads, tq, d, q.dtype());
  Tensor lse = Tensor::empty({B, heads, tq}, q.dtype());
  dispatch_float(q.dtype(), "flash_attention", [&]<typename T>() {
    const Problem<T> pb = make_problem<T>(q, k, v, keep, o.causal, bias, scale, o.dropout_p, seed,
                                          offset, counter_rows, round);
    const Heads<T> o_heads = heads_of<T>(out);
    T* lse_data = lse.data<T>();
    const int64_t tkp = padded_to_lanes(tk), dp = pb.dp;
    const Tensor keys_t = Tensor::empty({B * heads, d, tkp}, q.dtype());
    const Tensor values = Tensor::empty({B * heads, tk, dp}, q.dtype());
    parallel_for(B * heads, tk * d * 2, [&](int64_t bh) {
      pb.pack_columns(pb.k, bh / heads, bh % heads, 0, tk, tkp, keys_t.data<T>() + bh * d * tkp);
      pb.pack_rows(pb.v, bh / heads, bh % heads, 0, tk, values.data<T>() + bh * tk * dp);
    });
    const int64_t tiles = (tq + kQueryTile - 1) / kQueryTile;
    // A task's work: its two products (4d per score) and an exp with its row passes (~32).
    parallel_for(B * heads * tiles, kQueryTile * tk * (4 * d + 32), [&](int64_t task) {
      const int64_t bh = task / tiles, i0 = (task % tiles) * kQueryTile;
      const PackedHead<T> packed{keys_t.data<T>() + bh * d * tkp, values.data<T>() + bh * tk * dp,
                                 tkp};
      forward_tile(pb, bh / heads, bh % heads, i0, std::min(tq, i0 + kQueryTile), packed, o_heads,
                   lse_data + bh * tq);
    });
  });
  const bool biased = bias.defined();
  if (biased ? needs_grad({&q_in, &k_in, &v_in, &o.distance_bias})
             : needs_grad({&q_in, &k_in, &v_in})) {
    auto node = std::make_shared<FlashAttentionBackward>();
    node->scale = scale;
    node->causal = o.causal;
    node->round = round;
    node->biased = biased;
    node->p = o.dropout_p;
    node->seed = seed;
    node->offset = offset;
    node->counter_rows = std::move(counter_rows);
    node->q.save(q);
    node->k.save(k);
    node->v.save(v);
    node->out.save(out);
    node->lse.save(lse);
    node->keep.save(keep);
    node->bias.save(bias);
    attach_node(out, node,
                biased ? std::vector<Tensor>{q_in, k_in, v_in, o.distance_bias}
                       : std::vector<Tensor>{q_in, k_in, v_in});
  }
  return out;
}

std::vector<Tensor> FlashAttentionBackward::backward(const Tensor& g_in) {
  const Tensor qs = q.get(), ks = k.get(), vs = v.get(), o = out.get(), l = lse.get();
  const Tensor keep_mask = keep.get(), table = bias.get();
  const Tensor g = rows_readable(g_in);
  const int64_t B = qs.size(0), heads = qs.size(1), tq = qs.size(2), tk = ks.size(2),
                d = qs.size(3);
  Tensor dq = empty_heads(B, heads, tq, d, qs.dtype());
  Tensor dk = empty_heads(B, heads, tk, d, qs.dtype());
  Tensor dv = empty_heads(B, heads, tk, d, qs.dtype());
  const bool bias_gradient = biased && next_edges[3];
  const int64_t width = tq + tk - 1;
  std::vector<double> bias_sums(bias_gradient ? static_cast<size_t>(B * heads * width) : 0, 0.0);
  Tensor g_bias;
  dispatch_float(qs.dtype(), "flash_attention backward", [&]<typename T>() {
    const Problem<T> pb = make_problem<T>(qs, ks, vs, keep_mask, causal, table, scale, p, seed,
                                          offset, counter_rows, round);
    const Gradients<T> grads{heads_of<T>(dq), heads_of<T>(dk), heads_of<T>(dv),
                             bias_gradient ? bias_sums.data() : nullptr};
    const Heads<const T> o_heads = {o.data<T>(), o.stride(0), o.stride(1), o.stride(2)};
    const Heads<const T> g_heads = {g.data<T>(), g.stride(0), g.stride(1), g.stride(2)};
    const T* lse_data = l.data<T>();
    parallel_for(B * heads, tq * tk * (10 * d + 48), [&](int64_t bh) {
      backward_head(pb, bh / heads, bh % heads, o_heads, g_heads, lse_data + bh * tq, grads);
    });
    if (bias_gradient) {
      // Each head's sums over the batch in order: the same bits for any thread count.
      g_bias = Tensor::empty({heads, width}, qs.dtype());
      T* gb = g_bias.data<T>();
      for (int64_t h = 0; h < heads; ++h) {
        for (int64_t w = 0; w < width; ++w) {
          double total = 0.0;
          for (int64_t b = 0; b < B; ++b) total += bias_sums[(b * heads + h) * width + w];
          gb[h * width + w] = static_cast<T>(total);
        }
      }
    }
  });
  if (!biased) return {dq, dk, dv};
  return {dq, dk, dv, g_bias};
}

}  // namespace heed
