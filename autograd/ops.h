#pragma once
// Every differentiable op. Each lives in ops/<family>.cpp with its backward beside it.
// Float ops run on f32 (fast path) and f64 (reference path, for gradient checks).
#include <cstdint>
#include <optional>
#include <vector>

#include "autograd/generator.h"
#include "autograd/tensor.h"

namespace heed {

// --- elementwise, with NumPy broadcasting (ops/binary.cpp, ops/unary.cpp) ---
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor add(const Tensor& a, double b);
Tensor mul(const Tensor& a, double b);
Tensor pow(const Tensor& a, double exponent);
Tensor neg(const Tensor& a);
Tensor exp(const Tensor& a);
Tensor log(const Tensor& a);
Tensor sqrt(const Tensor& a);
Tensor tanh(const Tensor& a);
Tensor sigmoid(const Tensor& a);
Tensor relu(const Tensor& a);
enum class GeluApproximation { none, tanh };
// none: 0.5x(1+erf(x/sqrt2)) (BERT's "gelu"); tanh: GPT-2's "gelu_new".
Tensor gelu(const Tensor& a, GeluApproximation approximation = GeluApproximation::none);

inline Tensor operator+(const Tensor& a, const Tensor& b) {
  return add(a, b);
}
inline Tensor operator-(const Tensor& a, const Tensor& b) {
  return sub(a, b);
}
inline Tensor operator*(const Tensor& a, const Tensor& b) {
  return mul(a, b);
}
inline Tensor operator/(const Tensor& a, const Tensor& b) {
  return div(a, b);
}
inline Tensor operator-(const Tensor& a) {
  return neg(a);
}
inline Tensor operator+(const Tensor& a, double b) {
  return add(a, b);
}
inline Tensor operator-(const Tensor& a, double b) {
  return add(a, -b);
}
inline Tensor operator*(const Tensor& a, double b) {
  return mul(a, b);
}
inline Tensor operator*(double a, const Tensor& b) {
  return mul(b, a);
}
inline Tensor operator/(const Tensor& a, double b) {
  return mul(a, 1.0 / b);
}

// --- reductions (ops/reduce.cpp) ---
Tensor sum(const Tensor& a);  // all elements, a scalar of shape []
Tensor sum(const Tensor& a, const std::vector<int64_t>& dims, bool keepdim = false);
Tensor mean(const Tensor& a);
Tensor mean(const Tensor& a, const std::vector<int64_t>& dims, bool keepdim = false);
// Sums a broadcast gradient back down to `shape` (the inverse of broadcasting).
Tensor sum_to(const Tensor& a, const Shape& shape);
// Index of the largest value along `dim` (i64, no gradient).
Tensor argmax(const Tensor& a, int64_t dim);

// --- views and layout (ops/view.cpp, ops/concat.cpp, ops/convert.cpp) ---
Tensor reshape(const Tensor& a, const Shape& shape);  // one -1 allowed; copies if it must
// `a` itself behind a node of its own: the gradients of the alias's uses are summed there and
// reach `a` as one term. A block that reads an outer tensor several times (a decoder layer's
// cross-attention reads the encoder's output twice) so hands it one gradient, as the same block
// under gradient checkpointing does: the sums then run in the same order, to the same bits.
Tensor alias(const Tensor& a);
Tensor transpose(const Tensor& a, int64_t d0, int64_t d1);
Tensor permute(const Tensor& a, const Shape& dims);
Tensor slice(const Tensor& a, int64_t dim, int64_t start, int64_t end, int64_t step = 1);
Tensor select(const Tensor& a, int64_t dim, int64_t index);
Tensor unsqueeze(const Tensor& a, int64_t dim);
Tensor squeeze(const Tensor& a, int64_t dim);
Tensor expand(const Tensor& a, const Shape& shape);  // broadcast view (stride 0)
Tensor contiguous(const Tensor& a);
Tensor concat(const std::vector<Tensor>& tensors, int64_t dim);
std::vector<Tensor> split(const Tensor& a, const std::vector<int64_t>& sizes, int64_t dim);
std::vector<Tensor> chunk(const Tensor& a, int64_t chunks, int64_t dim);
Tensor to_dtype(const Tensor& a, DType dtype);
Tensor clone(const Tensor& a);

// --- matrix products (ops/matmul.cpp, ops/linear.cpp) ---
// [.., M, K] x [.., K, N] -> [.., M, N]; batch dims broadcast. Transposed operands (views)
// go through strides, never copies. f32 and bf16 run on oneDNN; f64 on the reference kernel.
Tensor matmul(const Tensor& a, const Tensor& b);
// How a linear layer's weight is laid out: [out, in] as nn.Linear (y = x W^T + b), or
// [in, out] as GPT-2's Conv1D (y = x W + b). Both multiply without copying the weight.
enum class WeightLayout { out_in, in_out };
// x [.., in] -> [.., out]; the bias is added by the oneDNN primitive.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(),
              WeightLayout layout = WeightLayout::out_in);
// gelu(linear(x, weight, bias, layout), approximation) with the same results, as one op: its
// backward applies GELU's derivative in the pass that sums the bias gradient (and rounds the
// gradient for bf16 products), instead of writing that gradient in f32 and reading it back.
Tensor linear_gelu(const Tensor& x, const Tensor& weight, const Tensor& bias,
                   GeluApproximation approximation, WeightLayout layout = WeightLayout::out_in);
// cross_entropy(linear(x, weight), targets, ignore_index, label_smoothing) with the same
// loss and gradients (within rounding), without ever holding the whole logits: x [.., in],
// weight [classes, in], targets shaped as x's leading dims. The rows go in chunks of
// `chunk_rows` (0: equal chunks of at least 2,048 rows, where the products run as fast as on
// all rows); each chunk's gradients are computed in forward, so backward only scales them.
// `predictions`, if given, receives argmax(linear(x, weight), -1) (i64, shaped as targets). A
// language model's head over a large vocabulary is this.
Tensor linear_cross_entropy(const Tensor& x, const Tensor& weight, const Tensor& targets,
                            int64_t ignore_index = -100, double label_smoothing = 0.0,
                            int64_t chunk_rows = 0, Tensor* predictions = nullptr);
// The same with a bias [classes] added to the logits (null: none).
Tensor linear_cross_entropy(const Tensor& x, const Tensor& weight, const Tensor& bias,
                            const Tensor& targets, int64_t ignore_index, double label_smoothing,
                            int64_t chunk_rows = 0, Tensor* predictions = nullptr);
// The rows of linear_cross_entropy's largest chunk over `rows` rows with chunk_rows = 0.
int64_t linear_cross_entropy_chunk_rows(int64_t rows);

// Which precision f32 matrix products use: f32, or bf16 inputs with f32 accumulation.
enum class MatmulPrecision { f32, bf16 };
void set_matmul_precision(MatmulPrecision precision);
MatmulPrecision matmul_precision();
// Whether this CPU multiplies bf16 natively (oneDNN 2.6 needs AVX-512). Without, bf16
// precision still gives bf16's numbers, by rounding the operands for the f32 kernels: slower
// than f32, so `train` falls back to f32 there.
bool native_bf16_products();

// --- embedding, normalisation, softmax (ops/embedding.cpp, ops/layer_norm.cpp, ...) ---
// Rows of `weight` [V, C] picked by integer `ids`; the padding row gets no gradient.
Tensor embedding(const Tensor& weight, const Tensor& ids, int64_t padding_idx = -1);
Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps = 1e-5);
// T5's layer norm: x * rsqrt(mean(x^2) + eps) * weight over the last dim (no mean, no bias).
Tensor rms_norm(const Tensor& x, const Tensor& weight, double eps = 1e-6);
Tensor softmax(const Tensor& a, int64_t dim);
Tensor log_softmax(const Tensor& a, int64_t dim);

// softmax(scores * scale + mask) over the last dim of scores [.., Tq, Tk], fused.
// `mask` (optional) broadcasts to scores: a float mask is added; a u8 mask keeps positions
// where it is 1 and removes those where it is 0. `causal` removes keys after the query
// (key index > query index + Tk - Tq). A row with every key removed yields zeros.
// `distance_bias` (optional, with its gradient) is a bias that depends only on the distance
// k - q between key and query, per head: [heads, Tq + Tk - 1] for scores [.., heads, Tq, Tk],
// distance_bias[h, k - q + Tq - 1] is added to score (q, k) before the scale (T5's relative
// attention bias), without a [Tq, Tk] tensor of it ever being made.
Tensor attention_softmax(const Tensor& scores, double scale, const Tensor& mask = Tensor(),
                         bool causal = false, const Tensor& distance_bias = Tensor());

// dropout(attention_softmax(scores, scale, mask, causal), p, true, generator) in one pass,
// dropping the same elements; its backward is one pass too. `probs`, if given, receives the
// probabilities before dropout.
Tensor attention_softmax_dropout(const Tensor& scores, double scale, const Tensor& mask,
                                 bool causal, double p, Generator& generator,
                                 Tensor* probs = nullptr);

// matmul(attention_softmax_dropout(scores, scale, mask, causal, p, generator, probs), v) with
// the same result and gradients, but backward recomputes the dropped probabilities rather
// than holding them from forward to backward (attention's memory at the end of forward is
// then one [.., Tq, Tk] tensor smaller per layer). v is [.., Tk, d] with the scores' leading dims.
//
// With `queries`, the scores [B, h, Q, Tk] are Q of the queries of a sequence of T
// (queries->sequence_length): row j of sequence b is its query queries->positions[b, j]
// (i64 [B, Q]). Dropout then drops what attention over all T queries would drop in those
// rows, and reserves as much of the generator's stream: a model computing only the rows it
// reads gets the attention a model computing every row gets in them. Not with `causal`.
struct QueryRows {
  Tensor positions;
  int64_t sequence_length = 0;
};
// `distance_bias` is attention_softmax's (not with `queries`).
Tensor attention_dropout_values(const Tensor& scores, const Tensor& v, double scale,
                                const Tensor& mask, bool causal, double p, Generator& generator,
                                Tensor* probs = nullptr, const QueryRows* queries = nullptr,
                                const Tensor& distance_bias = Tensor());

// Fused attention (ops/flash_attention.cpp), FlashAttention-2's way: query tiles against key
// tiles with a running maximum and sum per query, so that no [Tq, Tk] tensor is ever made;
// backward recomputes the probabilities from the log-sum-exp of each query row, the one
// thing saved besides the inputs and the output. Memory O(B h T), not O(B h T^2).
struct FlashAttentionOptions {
  // [B, Tk] u8, 1 = attend, 0 = padding (a batch of 1 broadcasts); undefined: none.
  Tensor key_padding;
  // Query i sees keys up to i + Tk - Tq (queries aligned to the last keys, as with a cache).
  bool causal = false;
  // attention_softmax's distance bias [h, Tq + Tk - 1], added before the scale, with its
  // gradient; undefined: none.
  Tensor distance_bias;
  // Dropout on the probabilities with probability p from `generator`'s counter stream: the
  // elements attention_dropout_values drops for the same generator state (`queries` as there).
  double dropout_p = 0.0;
  Generator* generator = nullptr;
  const QueryRows* queries = nullptr;
};
// softmax((q k^T + distance bias) * scale, masked) v for q [B, h, Tq, d], k and v [B, h, Tk, d]
// (any strides with a unit last stride: heads split from [B, T, h, d] are read where they lie)
// -> [B, h, Tq, d], laid out as [B, Tq, h, d] so that merging the heads is a view. f32 or f64
// (the reference path, for gradient checks); under bf16 matrix-product precision q, k, v, dO and
// the scores' gradient are rounded to bf16 as the unfused path's products round them, with f32
// sums (the probabilities stay f32: ops/flash_attention.cpp says why). A query that sees no key
// gets zeros.
Tensor flash_attention(const Tensor& q, const Tensor& k, const Tensor& v, double scale,
                       const FlashAttentionOptions& options = {});

// BERT's relative-position attention term from its products with the distance table: x is
// [.., T, 2T - 1] where x[.., i, j] pairs position i with distance j - (T - 1), and the result
// [.., T, T] is out[.., l, r] = x[.., l, l - r + T - 1] (by query: q_l . E[l, r]) or
// x[.., r, l - r + T - 1] (by key: k_r . E[l, r]). So q . W^T over the 2T - 1 distances that
// occur, then this, gives q . E without ever making E [T, T, d].
Tensor relative_position_gather(const Tensor& x, bool by_key);

// Multi-head self-attention from its packed projections, in one op: qkv [B, T, 3C] holds each
// position's query, key and value side by side ([q | k | v], each C = heads x d with the heads
// side by side, as GPT-2's c_attn writes them). Returns the attention-weighted values
// [B, T, C] with the heads merged: attention_dropout_values(q . k^T, v, 1/sqrt(d), mask,
// causal, p, generator, probs) on the heads of q, k and v, with the same numbers, but the
// products read the heads where they lie and backward writes the gradients of q, k and v
// straight into one [B, T, 3C] tensor (no slices to sum). `mask` broadcasts to [B, heads, T,
// T] as attention_softmax's; p = 0 is no dropout (evaluation); `probs`, if given, receives
// the probabilities before dropout.
Tensor self_attention_qkv(const Tensor& qkv, int64_t heads, const Tensor& mask, bool causal,
                          double p, Generator* generator, Tensor* probs = nullptr);

// Inverted dropout: zeroes each element with probability p and scales the rest by 1/(1-p).
// The elements come from the counter-based stream of (generator's seed, reserved offset); the
// kept ones are stored as a bit each for backward.
Tensor dropout(const Tensor& a, double p, bool training, Generator& generator);

// Mean cross-entropy of logits [N, C] against class ids [N] (i64), over the targets that are
// not `ignore_index`. Label smoothing as PyTorch defines it.
Tensor cross_entropy(const Tensor& logits, const Tensor& targets, int64_t ignore_index = -100,
                     double label_smoothing = 0.0);

// Knowledge distillation (ops/distillation.cpp; Sanh et al. 2019). The teacher's rows are
// constants (computed without gradient): only the student's get one.
// KL(softmax(teacher / T) || softmax(student / T)) * T^2, averaged over the N rows of
// student and teacher [N, C]: PyTorch's KLDivLoss(reduction="batchmean") of
// log_softmax(student / T) against softmax(teacher / T), times T^2 (so the gradient's size does
// not shrink as 1/T^2). No rows: 0.
Tensor soft_target_kl(const Tensor& student, const Tensor& teacher, double temperature);
// The mean over the N rows of a and b [N, H] of 1 - cos(a_r, b_r): PyTorch's
// CosineEmbeddingLoss with every target 1 (norms clamped below by 1e-8 as cosine_similarity).
// No rows: 0.
Tensor cosine_embedding_loss(const Tensor& a, const Tensor& b);

void set_num_threads(int threads);
int num_threads();

}  // namespace heed
