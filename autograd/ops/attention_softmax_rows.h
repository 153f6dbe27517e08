#pragma once
// The kernels under attention_softmax_dropout, shared with attention_dropout_values (the
// same softmax and dropout, followed by the product with the values in one op) and
// self_attention_qkv (the whole of self-attention in one op).
#include <cstdint>
#include <vector>

#include "autograd/tensor.h"

namespace heed {

struct QueryRows;  // autograd/ops.h

// Dropout after the softmax: probability p, from the stream of (seed, offset) as dropout()
// draws it.
struct RowDropout {
  double p = 0.0;
  uint64_t seed = 0, offset = 0;
  // Write the dropped f32 probabilities rounded to bf16, for a bf16 product that would
  // otherwise round them in a pass of its own.
  bool bf16_output = false;
  // Row r of the scores draws what row counter_rows[r] of a larger scores tensor (as wide)
  // would draw; null: row r's own.
  const int64_t* counter_rows = nullptr;
};

// The dropout counter row of each row of attention over `picked` of a sequence's queries
// (QueryRows, [batch, heads, picked] rows): its row in attention over all of them, [batch,
// heads, sequence_length]. Checks the positions.
std::vector<int64_t> picked_query_counter_rows(const QueryRows& queries, int64_t batch,
                                               int64_t heads, int64_t picked);

// softmax((scores + distance bias) * scale + mask), and with `drop` dropout after it: returns
// the dropped probabilities and puts the undropped ones in *probs and the kept elements (a row
// of bits per row of scores) in *keep. The distance bias (ops.h's attention_softmax) is
// optional. No autograd.
Tensor attention_softmax_rows(const Tensor& scores, double scale, const Tensor& mask, bool causal,
                              const RowDropout* drop, Tensor* probs, Tensor* keep,
                              const Tensor& distance_bias = Tensor());

// The gradient of a distance bias [heads, Tq + Tk - 1] from that of the scores [.., heads, Tq,
// Tk] it was added to: entry d of head h sums the scores' gradient over every (q, k) with
// k - q + Tq - 1 = d (a diagonal of each [Tq, Tk] plane) and over the leading dims. No autograd.
Tensor distance_bias_gradient(const Tensor& g_scores, int64_t heads);

// The gradient of the scores from the gradient g of the dropped probabilities, the undropped
// ones y and the keep bits: gx = scale * y * (gy - sum(gy * y)) per row with
// gy = g * keep / (1 - p). Written over g when nothing else holds it. No autograd.
Tensor attention_softmax_dropout_backward(const Tensor& g, const Tensor& y, const Tensor& keep,
                                          double scale, double p);

// The same without dropout: gx = scale * y * (g - sum(g * y)) per row. Written over g when
// nothing else holds it. No autograd.
Tensor attention_softmax_backward(const Tensor& g, const Tensor& y, double scale);

// The dropped probabilities y * keep / (1 - p) again, by the same multiplications as the
// forward's (so the same bits), in y's type or rounded to bf16 for a bf16 product. No autograd.
Tensor recompute_dropped(const Tensor& y, const Tensor& keep, double p, bool to_bf16);

}  // namespace heed
