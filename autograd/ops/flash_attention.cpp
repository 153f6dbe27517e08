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

namespace heed {
namespace {

using kernels::padded_to_lanes;
using kernels::tile_product;

// Query rows and key columns per tile. A 64 x 128 f32 score tile is 32 KB (L1/L2), and 128
// keys a step make the per-row rescaling (d multiplies) small beside the tile's products.
constexpr int64_t kQueryTile = 64;
constexpr int64_t kKeyTile = 128;

// x rounded to bf16 and back: what a bf16 product reads of an f32 operand. Products of two
// such values are exact in f32, so f32 sums of them are what a bf16 product with f32
// accumulation computes, up to the order of the sums.
inline float bf16_value(float x) {
  return std::bit_cast<float>(static_cast<uint32_t>(bf16_bits_of(x)) << 16);
}
template <typename T>
inline T operand(T x, bool round) {
  if constexpr (std::is_same_v<T, float>) {
    return round ? bf16_value(x) : x;
  } else {
    return x;
  }
}

// One of q, k, v (or an output or gradient) as [B, h, T, d] with a unit last stride.
template <typename T>
struct Heads {
  T* data;
  int64_t batch_stride, head_stride, row_stride;
  T* row(int64_t b, int64_t h, int64_t t) const {
    return data + b * batch_stride + h * head_stride + t * row_stride;
  }
};

template <typename T>
Heads<T> heads_of(const Tensor& t) {
  return {t.data<T>(), t.stride(0), t.stride(1), t.stride(2)};
}

// [B, h, T, d] memory laid out as [B, T, h, d]: merging the heads after attention is a view,
// and a gradient flows back through split_heads' permute without a copy.
Tensor empty_heads(int64_t B, int64_t h, int64_t T, int64_t d, DType dtype) {
  return Tensor::empty({B, T, h, d}, dtype).permute({0, 2, 1, 3});
}

// Everything a tile needs to know about the call.
template <typename T>
struct Problem {
  int64_t batch, heads, tq, tk, d, dp;  // dp: d padded to the tile lanes
  Heads<const T> q, k, v;
  const uint8_t* keep = nullptr;  // [B, Tk] padding mask or null
  int64_t keep_batch_stride = 0;
  bool causal = false;
  const T* bias = nullptr;  // [heads, tq + tk - 1] or null
  T scale = 1;
  bool round = false;  // bf16 operands
  // Dropout: keep element (row, key) when its draw from (seed, offset) is >= threshold.
  bool dropout = false;
  uint32_t threshold = 0;
  T inv_keep = 1;
  uint64_t seed = 0, offset = 0;
  const int64_t* counter_rows = nullptr;  // picked queries: their rows in all queries

  // Keys [0, limit) are visible to query i (at most tk; 0 or less: none).
  int64_t key_limit(int64_t i) const { return causal ? std::min(tk, i + tk - tq + 1) : tk; }

  // The scores of query i of head (b, h) against keys [j0, j0 + n), from their products
  // q . k in row[0, n), masked: kernels::score_row. Returns their maximum. Forward and backward
  // both score through this, so backward's scores are forward's bits.
  T score_row(int64_t b, int64_t h, int64_t i, int64_t j0, int64_t n, T* row) const {
    return kernels::score_row(row, n, bias ? bias + h * (tq + tk - 1) + (j0 - i + tq - 1) : nullptr,
                              keep ? keep + b * keep_batch_stride + j0 : nullptr, scale,
                              key_limit(i) - j0);
  }

  // z[c] = 1 / (1 - p) where element (query i, key j0 + c) is kept, 0 where it is dropped.
  void dropout_factors(int64_t b, int64_t h, int64_t i, int64_t j0, int64_t n, uint16_t* draws,
                       T* z) const {
    const int64_t row = (b * heads + h) * tq + i;
    const int64_t counter_row = counter_rows ? counter_rows[row] : row;
    for (int64_t c0 = 0; c0 < n; c0 += kMaxDropoutDraws) {
      const int64_t count = std::min(n - c0, kMaxDropoutDraws);
      dropout_draws(seed, offset, counter_row * tk + j0 + c0, count, draws);
      kernels::dropout_factors(draws, count, threshold, inv_keep, z + c0);
    }
  }

  // Rows [t0, t0 + n) of `src` (one of q, k, v of head (b, h)) into dense rows of dp columns,
  // rounded for bf16 products, zero past d.
  void pack_rows(const Heads<const T>& src, int64_t b, int64_t h, int64_t t0, int64_t n,
                 T* out) const {
    for (int64_t r = 0; r < n; ++r) {
      const T* in = src.row(b, h, t0 + r);
      T* o = out + r * dp;
      for (int64_t c = 0; c < d; ++c) o[c] = operand(in[c], round);
      for (int64_t c = d; c < dp; ++c) o[c] = 0;
    }
  }

  // The same rows transposed, [d, np] (np: n padded to the lanes), zero past n.
  void pack_columns(const Heads<const T>& src, int64_t b, int64_t h, int64_t t0, int64_t n,
                    int64_t np, T* out) const {
    for (int64_t r = 0; r < n; ++r) {
      const T* in = src.row(b, h, t0 + r);
      for (int64_t c = 0; c < d; ++c) out[c * np + r] = operand(in[c], round);
    }
    for (int64_t c = 0; c < d; ++c) {
      for (int64_t r = n; r < np; ++r) out[c * np + r] = 0;
    }
  }
};

// A thread's scratch for tiles, kept across calls: no allocation once the sizes are seen.
template <typename T>
T* scratch(std::vector<T>& buffer, size_t n) {
  if (buffer.size() < n) buffer.resize(n);
  return buffer.data();
}

// A head's keys transposed, [d, tkp] (tkp: Tk padded to the lanes), and its values [Tk, dp],
// packed once for all its query tiles (rounded for bf16 products): transposing a key tile for
// every query tile cost as much as a third of the tile's products.
template <typename T>
struct PackedHead {
  const T* keys_t;
  const T* values;
  int64_t tkp;
};

// Forward over query rows [i0, i1) of head (b, h): out rows and their log-sum-exp (+inf for a
// query that sees no key, so that backward's exp(score - lse) is 0 there).
template <typename T>
void forward_tile(const Problem<T>& pb, int64_t b, int64_t h, int64_t i0, int64_t i1,
                  const PackedHead<T>& packed, const Heads<T>& out, T* lse) {
  constexpr T neg_inf = -std::numeric_limits<T>::infinity();
  const int64_t br = i1 - i0, d = pb.d, dp = pb.dp;
  thread_local std::vector<T> buffer;
  thread_local std::vector<uint16_t> draw_buffer;
  const int64_t kp = padded_to_lanes(kKeyTile);
  T* q = scratch(buffer, static_cast<size_t>(br * dp + br * kp + br * dp + 2 * br + kp));
  T* s = q + br * dp;    // [br, kp]: scores, then probabilities
  T* acc = s + br * kp;  // [br, dp]: the running sum of p . v
  T* m = acc + br * dp;  // running maximum per row
  T* l = m + br;         // running sum per row
  T* z = l + br;         // dropout factors of a row
  uint16_t* draws = pb.dropout ? scratch(draw_buffer, kMaxDropoutDraws) : nullptr;
  pb.pack_rows(pb.q, b, h, i0, br, q);
  std::fill(acc, acc + br * dp, T(0));
  std::fill(m, m + br, neg_inf);
  std::fill(l, l + br, T(0));
  // Keys past the last row's limit are masked for every row of the tile: skipped.
  const int64_t key_end = pb.key_limit(i1 - 1);
  for (int64_t j0 = 0; j0 < key_end; j0 += kKeyTile) {
    const int64_t bc = std::min(kKeyTile, key_end - j0), bcp = padded_to_lanes(bc);
    tile_product(br, bcp, d, q, dp, 1, packed.keys_t + j0, packed.tkp, s, bcp, false);
    for (int64_t r = 0; r < br; ++r) {
      T* row = s + r * bcp;
      const T tile_max = pb.score_row(b, h, i0 + r, j0, bc, row);
      const T m_new = std::max(m[r], tile_max);
      if (m_new == neg_inf) {  // nothing visible yet: the row's sums stay 0
        std::fill(row, row + bc, T(0));
        continue;
      }
      const T sum = kernels::exp_row(row, bc, m_new);
      const T alpha = fast::exp_nonpositive<T>(m[r] - m_new);  // 0 from -inf
      l[r] = l[r] * alpha + sum;
      m[r] = m_new;
      if (alpha != T(1)) {
        T* a = acc + r * dp;
        for (int64_t c = 0; c < dp; ++c) a[c] *= alpha;
      }
      if (pb.dropout) {
        pb.dropout_factors(b, h, i0 + r, j0, bc, draws, z);
        for (int64_t c = 0; c < bc; ++c) row[c] *= z[c];
      }
    }
    tile_product(br, dp, bc, s, bcp, 1, packed.values + j0 * dp, dp, acc, dp, true);
  }
  for (int64_t r = 0; r < br; ++r) {
    T* o = out.row(b, h, i0 + r);
    const T inv = l[r] > 0 ? T(1) / l[r] : T(0);
    for (int64_t c = 0; c < d; ++c) o[c] = acc[r * dp + c] * inv;
    lse[i0 + r] = l[r] > 0 ? m[r] + std::log(l[r]) : std::numeric_limits<T>::infinity();
  }
}

// What backward writes: the gradients of q, k, v and, per (batch, head), the distance bias's
// gradient summed over its diagonals (in double, reduced over the batch afterwards).
template <typename T>
struct Gradients {
  Heads<T> dq, dk, dv;
  double* bias = nullptr;  // [B * heads, tq + tk - 1] or null
};

// Backward for head (b, h): key tiles in turn, each against every query tile that sees it.
template <typename T>
void backward_head(const Problem<T>& pb, int64_t b, int64_t h, const Heads<const T>& out,
                   const Heads<const T>& g_out, const T* lse, const Gradients<T>& grads) {
  const int64_t tq = pb.tq, tk = pb.tk, d = pb.d, dp = pb.dp;
  const int64_t kp = padded_to_lanes(kKeyTile);
  thread_local std::vector<T> buffer;
  thread_local std::vector<uint16_t> draw_buffer;
  T* q = scratch(buffer, static_cast<size_t>(3 * tq * dp + tq + 2 * d * kp + 3 * kp * dp +
                                             2 * kQueryTile * kp + kp));
  T* g = q + tq * dp;           // [tq, dp]: dO, rounded as the products read it
  T* dq = g + tq * dp;          // [tq, dp]: dQ's sums
  T* delta = dq + tq * dp;      // [tq]: D = rowsum(dO * O)
  T* kt = delta + tq;           // [d, kp]: the key tile transposed
  T* vt = kt + d * kp;          // [d, kp]: the value tile transposed
  T* k = vt + d * kp;           // [kp, dp]: the key tile
  T* dk = k + kp * dp;          // [kp, dp]
  T* dv = dk + kp * dp;         // [kp, dp]
  T* p = dv + kp * dp;          // [kQueryTile, kp]: probabilities (dropped) for dV
  T* ds = p + kQueryTile * kp;  // [kQueryTile, kp]: dP, then the scores' gradient dS
  T* z = ds + kQueryTile * kp;  // dropout factors of a row
  uint16_t* draws = pb.dropout ? scratch(draw_buffer, kMaxDropoutDraws) : nullptr;
  pb.pack_rows(pb.q, b, h, 0, tq, q);
  for (int64_t i = 0; i < tq; ++i) {
    const T* gi = g_out.row(b, h, i);
    const T* oi = out.row(b, h, i);
    T* gr = g + i * dp;
    T dot = 0;
    for (int64_t c = 0; c < d; ++c) {
      gr[c] = operand(gi[c], pb.round);
      dot += gr[c] * oi[c];
    }
    for (int64_t c = d; c < dp; ++c) gr[c] = 0;
    delta[i] = dot;
  }
  std::fill(dq, dq + tq * dp, T(0));
  double* g_bias = grads.bias ? grads.bias + (b * pb.heads + h) * (tq + tk - 1) : nullptr;
  const T scale = pb.scale;
  for (int64_t j0 = 0; j0 < tk; j0 += kKeyTile) {
    const int64_t bc = std::min(kKeyTile, tk - j0), bcp = padded_to_lanes(bc);
    std::fill(dk, dk + bc * dp, T(0));
    std::fill(dv, dv + bc * dp, T(0));
    // The first query that sees key j0 (causal: those before it see none of this tile).
    const int64_t first = pb.causal ? std::max<int64_t>(0, j0 - (tk - tq)) : 0;
    if (first < tq) {
      pb.pack_columns(pb.k, b, h, j0, bc, bcp, kt);
      pb.pack_columns(pb.v, b, h, j0, bc, bcp, vt);
      pb.pack_rows(pb.k, b, h, j0, bc, k);
    }
    for (int64_t i0 = first; i0 < tq; i0 += kQueryTile) {
      const int64_t br = std::min(kQueryTile, tq - i0);
      tile_product(br, bcp, d, q + i0 * dp, dp, 1, kt, bcp, p, bcp, false);
      tile_product(br, bcp, d, g + i0 * dp, dp, 1, vt, bcp, ds, bcp, false);
      for (int64_t r = 0; r < br; ++r) {
        const int64_t i = i0 + r;
        T* pr = p + r * bcp;
        T* dr = ds + r * bcp;
        pb.score_row(b, h, i, j0, bc, pr);
        if (pb.dropout) pb.dropout_factors(b, h, i, j0, bc, draws, z);
        // The bias joins the products before the scale: its gradient is dS summed per diagonal.
        kernels::gradient_row(pr, dr, pb.dropout ? z : nullptr, bc, lse[i], delta[i], scale,
                              g_bias ? g_bias + (j0 - i + tq - 1) : nullptr);
        if constexpr (std::is_same_v<T, float>) {
          if (pb.round) kernels::round_row_to_bf16(dr, bc);
        }
      }
      // dV += P^T dO, dK += dS^T Q, dQ += dS K (the transposes are strides).
      tile_product(bc, dp, br, p, 1, bcp, g + i0 * dp, dp, dv, dp, true);
      tile_product(bc, dp, br, ds, 1, bcp, q + i0 * dp, dp, dk, dp, true);
      tile_product(br, dp, bc, ds, bcp, 1, k, dp, dq + i0 * dp, dp, true);
    }
    for (int64_t r = 0; r < bc; ++r) {
      std::copy(dk + r * dp, dk + r * dp + d, grads.dk.row(b, h, j0 + r));
      std::copy(dv + r * dp, dv + r * dp + d, grads.dv.row(b, h, j0 + r));
    }
  }
  for (int64_t i = 0; i < tq; ++i) std::copy(dq + i * dp, dq + i * dp + d, grads.dq.row(b, h, i));
}

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
