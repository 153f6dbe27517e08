#pragma once
// Multi-head attention, self and cross, with padding and causal masks (combinable), and
// the attention probabilities on request.
#include <memory>
#include <optional>
#include <string>

#include "autograd/generator.h"
#include "nn/kv_cache.h"
#include "nn/linear.h"
#include "nn/module.h"
#include "nn/relative_positions.h"

namespace heed {
struct QueryRows;  // autograd/ops.h
}  // namespace heed

namespace heed::nn {

struct PickedQueries;  // nn/picked_queries.h

// How scaled_dot_product_attention computes: `fused` is flash_attention (autograd/ops.h: key
// tiles with an online softmax, memory O(B h T)), `unfused` the [B, h, Tq, Tk] scores and
// probabilities, `automatic` the fused path where it is the faster one or the scores would be
// large (fused_attention_pays). A call the fused path cannot express (probabilities asked for,
// a score_bias tensor, a mask other than key padding) is unfused whatever the choice.
enum class AttentionKernel { automatic, fused, unfused };

// The process-wide choice that options with kernel = automatic follow: the environment's
// HEED_ATTENTION (fused, unfused or auto; unset: auto) until set here (tests, benchmarks).
void set_attention_kernel(AttentionKernel kernel);
AttentionKernel attention_kernel();

// Whether `automatic` takes the fused path for batch x heads rows of Tq queries over Tk keys:
// where it is faster (causal attention from 256 keys, 512 under bf16 products, where it skips
// the masked tiles) or where the unfused path's [B, h, Tq, Tk] probabilities would take 512 MB
// or more (bidirectional attention is 3-12% slower fused in f32 and up to 1.5x slower under
// bf16 products, whose unfused products run at twice the f32 rate; docs/performance.md).
bool fused_attention_pays(int64_t batch, int64_t heads, int64_t tq, int64_t tk, bool causal);

// What scaled_dot_product_attention does besides the product, by name (PyTorch's keyword
// arguments): scaled_dot_product_attention(q, k, v, {.mask = m, .causal = true}).
struct ScaledDotProductOptions {
  // Broadcasts to [B, h, Tq, Tk]: u8 (1 = attend, 0 = masked) or additive float.
  Tensor mask;
  bool causal = false;  // query i sees no key after it
  // [B, h, Tq, Tk], added to q . k^T before the scale, with its gradient (BERT's relative
  // position term); undefined: none.
  Tensor score_bias;
  // [h, Tq + Tk - 1]: a bias by distance, distance_bias[h, j - i + Tq - 1] added to score
  // (i, j) before the scale, with its gradient, by the softmax kernel (T5's relative attention
  // bias; attention_softmax in autograd/ops.h); undefined: none.
  Tensor distance_bias;
  // What the scores are multiplied by; unset: 1/sqrt(d). T5 scales none (1.0).
  std::optional<double> scale;
  // Dropout on the probabilities, drawn from `generator`, when dropout_p > 0 and training.
  double dropout_p = 0.0;
  bool training = false;
  Generator* generator = nullptr;
  Tensor* probs = nullptr;  // receives the probabilities [B, h, Tq, Tk] (before dropout)
  // Which queries of a longer sequence q holds, for dropout (see attention_dropout_values).
  const QueryRows* queries = nullptr;
  // automatic: attention_kernel()'s choice.
  AttentionKernel kernel = AttentionKernel::automatic;
};

// softmax((q k^T + bias) / sqrt(d) + mask) v for q [B, h, Tq, d], k and v [B, h, Tk, d].
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const ScaledDotProductOptions& options = {});

// A [B, Tk] padding mask (1 = token, 0 = padding; any integer or float dtype) as the u8
// [B, 1, 1, Tk] mask that attention broadcasts over heads and queries.
Tensor padding_mask_for_attention(const Tensor& attention_mask);

// A [B, T] padding mask (1 = token) as u8, converted once per forward by the models so
// that no layer converts it again; undefined stays undefined.
Tensor keep_mask(const Tensor& attention_mask);

// Child names of the projections, so that parameter names match the checkpoint layout of
// a model family. Default: BART's (`q_proj` ... `out_proj`). BERT registers the module as
// `attention` with {"self.query", "self.key", "self.value", "output.dense",
// "self.distance_embedding"}; GPT-2 uses a fused projection named by `query` ("c_attn") and
// `output` = "c_proj".
struct AttentionNames {
  std::string query = "q_proj";
  std::string key = "k_proj";
  std::string value = "v_proj";
  std::string output = "out_proj";
  std::string distance_embedding = "distance_embedding";  // with relative positions
};

// T5's names: q, k, v, o.
inline AttentionNames t5_attention_names() {
  return {.query = "q", .key = "k", .value = "v", .output = "o"};
}

struct AttentionOptions {
  int64_t embed_dim = 0;
  int64_t num_heads = 1;
  // Each head's size; 0: embed_dim / num_heads. T5's d_kv may make heads x head_dim differ
  // from embed_dim (the projections are then [embed_dim -> heads x head_dim] and back).
  int64_t head_dim = 0;
  // Multiply the scores by 1/sqrt(head_dim); T5 does not (its initialisation folds it in).
  bool scale_scores = true;
  double dropout = 0.0;  // on the attention probabilities
  bool bias = true;
  double init_std = 0.02;
  double output_init_std = 0.02;  // GPT-2 scales its c_proj init by 1/sqrt(2 n_layer)
  // The query projection's; 0: init_std. T5 folds the scores' 1/sqrt(d) into it.
  double query_init_std = 0.0;
  // One [C, 3C] projection whose output columns are [q | k | v] (GPT-2's c_attn), instead
  // of three.
  bool fused_qkv = false;
  WeightLayout layout = WeightLayout::out_in;
  DType dtype = DType::f32;
  AttentionNames names;
  // BERT's relative position embeddings (nn/relative_positions.h), over a table of
  // 2 max_positions - 1 distances: self-attention only, separate projections, no cache.
  RelativePositions relative_positions = RelativePositions::kNone;
  int64_t max_positions = 0;
};

struct AttentionOutput {
  Tensor output;  // [B, Tq, C], or [M, C] for M output rows
  Tensor probs;   // [B, h, Tq, Tk], only when asked for
};

// What one forward call attends to and returns besides the output, named at the call:
// attn.forward(x, {.causal = true, .cache = &cache}) or
// attn.forward(q, {.key_value = memory, .key_padding_mask = mask}).
struct AttentionCall {
  // [B, Tk, C] for cross-attention; undefined for self-attention.
  Tensor key_value;
  // [B, Tk] (1 = token, 0 = padding), or undefined.
  Tensor key_padding_mask;
  // Query i sees no key after it.
  bool causal = false;
  // [h, Tq + Tk - 1], ScaledDotProductOptions::distance_bias, or undefined. With a cache, Tk
  // counts the cached keys too.
  Tensor distance_bias;
  // Fill AttentionOutput::probs.
  bool need_weights = false;
  // With a cache, self-attention appends the keys and values of the Tq new positions to it
  // and attends over all of them (Tk = cached + Tq; a causal mask aligns the queries to the
  // last keys); cross-attention projects key_value into an empty cache and reuses it after
  // (a cache belongs to one memory). Decoding runs under NoGradGuard: with gradients on, the
  // cache would hold every step's graph.
  AttentionCache* cache = nullptr;
  // i64 [M], indices into the flattened [B * Tq] queries: if given, only those rows are kept
  // and `output` is [M, C]. The output projection runs on them alone, and so do the query
  // projection and the attention itself where nothing asks for the probabilities of every
  // row (not causal, no cache, separate projections).
  Tensor output_rows;
};

class MultiHeadAttention : public Module {
 public:
  MultiHeadAttention(const AttentionOptions& options, Generator& init,
                     std::shared_ptr<Generator> dropout_generator);

  // query [B, Tq, C]; the rest as AttentionCall says.
  AttentionOutput forward(const Tensor& query, const AttentionCall& call = {}) const;

  AttentionOptions options;
  int64_t head_dim;
  int64_t inner_dim;                               // num_heads x head_dim
  std::shared_ptr<Linear> q_proj, k_proj, v_proj;  // q_proj is the fused one if fused_qkv
  std::shared_ptr<Linear> out_proj;
  std::shared_ptr<RelativePositionScores> relative;  // null without relative positions
  std::shared_ptr<Generator> dropout_generator;

 private:
  // forward's three paths. Self-attention from the fused q/k/v projection in one op (no
  // cache to read or extend):
  AttentionOutput fused_self_attention(const Tensor& query, const AttentionCall& call) const;
  // Attention from the picked queries alone (separate projections, no cache, not causal):
  AttentionOutput picked_query_attention(const Tensor& query, const Tensor& kv,
                                         const AttentionCall& call,
                                         const PickedQueries& picked) const;
  // Everything else: every query, with or without a KV cache.
  AttentionOutput full_attention(const Tensor& query, const Tensor& kv,
                                 const AttentionCall& call) const;
  // full_attention's q, k and v [B, h, T, d]; k and v stay undefined where a cross-attention
  // cache holds them already (reuse_keys).
  struct Heads {
    Tensor q, k, v;
  };
  Heads project_heads(const Tensor& query, const Tensor& kv, bool reuse_keys) const;
  // The output projection of merged heads [B, Tq, C], on call.output_rows alone if given.
  Tensor project_output(const Tensor& merged, const Tensor& output_rows) const;
};

}  // namespace heed::nn
