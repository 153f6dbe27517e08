#pragma once
// The tile math of flash_attention (autograd/ops/flash_attention.cpp, which says what it
// computes and why): the problem one call describes, a query tile's forward pass against the
// key tiles, and one head's backward pass recomputing the probabilities from the log-sum-exp.
#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <vector>

#include "autograd/kernels/attention_tiles.h"
#include "autograd/kernels/dispatch.h"
#include "autograd/kernels/dropout_draws.h"
#include "autograd/kernels/fast_math.h"
#include "autograd/kernels/parallel.h"
#include "autograd/ops/attention_softmax_rows.h"
#include "autograd/tensor.h"

namespace heed::flash_attention_tiles {

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
inline Tensor empty_heads(int64_t B, int64_t h, int64_t T, int64_t d, DType dtype) {
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
}  // namespace heed::flash_attention_tiles
