#include "train/run/memory_estimate.h"

#include <algorithm>
#include <string>
#include <vector>

#include "autograd/ops.h"
#include "nn/attention.h"
#include "train/tasks/model_configs.h"

namespace heed::train {

// Rows of a micro-batch: train.batch_size, or the whole training set when that is smaller.
double batch_rows(const RunConfig& c, const TaskData& d) {
  const double examples = d.train ? static_cast<double>(d.train->size()) : 0.0;
  const double rows = static_cast<double>(c.train.batch_size);
  return examples > 0 ? std::min(rows, examples) : rows;
}

namespace {

// One Transformer layer: the four attention projections, the feed-forward pair, two LayerNorms.
double layer_parameters(double hidden, double ffn) {
  return 4 * (hidden * hidden + hidden) + 2 * hidden * ffn + ffn + hidden + 4 * hidden;
}

// Bytes one layer keeps per token for its backward, as heed's ops save them: the operands of
// its products (the layer's input, the packed query|key|value projection, attention's output,
// the feed-forward's input, pre-activation and activation), in bf16 when the products run in
// bf16 (`operand` 2) and f32 otherwise; the two LayerNorms' f32 inputs and their mean and
// rstd; a row of f32 attention probabilities per head over `keys`; the dropout masks, a bit
// per element (the probabilities', the two hidden states').
double layer_bytes_per_token(double hidden, double ffn, double heads, double keys, double operand) {
  return operand * (6 * hidden + 2 * ffn) + 4 * (2 * hidden + 4 + heads * keys) +
         (heads * keys + 2 * hidden) / 8;
}

// What a stack of `layers` layers keeps for backward over `tokens` positions: all that each
// layer saves, or with gradient checkpointing each layer's f32 input and, while one layer is
// recomputed, that layer's working set.
double stack_activations(const RunConfig& c, double layers, double tokens, double per_token,
                         double hidden) {
  if (!c.train.gradient_checkpointing) return layers * tokens * per_token;
  return layers * tokens * 4 * hidden + tokens * per_token;
}

// The short-lived tensors on top of what the layers keep, one layer's at a time: the f32
// probabilities' gradient [rows, heads, T, T] (the scores before it), and the gradients in
// flight through a layer's backward, of its output, its query|key|value projection and its
// feed-forward's two inner activations. Sized against measured peaks (docs/performance.md).
double step_workspace(double tokens, double heads, double keys, double hidden, double ffn) {
  return 4 * tokens * (heads * keys + 5 * hidden + 2 * ffn);
}

// The keys per query whose probabilities attention keeps for backward: every key on the
// unfused path; on the fused one (nn/attention.h's choice for these rows, HEED_ATTENTION's
// included) one log-sum-exp per query and head, a key's worth, and no dropout mask. A [B, h, T,
// T] score bias (BERT's relative positions) keeps a call unfused.
double kept_keys(double rows, double heads, double queries, double keys, bool causal,
                 bool score_bias = false) {
  const nn::AttentionKernel kernel = nn::attention_kernel();
  if (score_bias || kernel == nn::AttentionKernel::unfused) return keys;
  const auto i = [](double x) { return static_cast<int64_t>(x); };
  if (kernel == nn::AttentionKernel::fused ||
      nn::fused_attention_pays(i(rows), i(heads), i(queries), i(keys), causal)) {
    return 1;
  }
  return keys;
}

// The program before any model: its code, oneDNN's and OpenMP's, the tokenizer (measured:
// `train` on a one-layer model of hidden size 8 peaks at 57 MB, its data index included).
constexpr double kRuntimeBytes = 40e6;

// The data sets while training: a window's place in the corpus (16 bytes) per example, and
// its token ids (4 bytes each, at most a window), which the token cache maps in as they are read.
double data_bytes(const RunConfig& c, const TaskData& d) {
  double examples = 0;
  for (const auto& split : {d.train, d.valid, d.test}) {
    if (split) examples += static_cast<double>(split->size());
  }
  const bool seq2seq = c.model.arch() == Arch::kBart || c.model.arch() == Arch::kT5;
  const int64_t window =
      seq2seq ? c.data.max_source_length + c.data.max_target_length : c.data.max_seq_length;
  return examples * (16 + 4 * static_cast<double>(window));
}

struct Shape {
  double parameters = 0, activation_bytes = 0;  // activations for the whole micro-batch
};

// A language-model head over `rows` positions through linear_cross_entropy: the f32 logits of
// a chunk of rows at a time, their gradient written over them, and the gradients of its input
// and weight that forward computes and keeps for backward.
double head_bytes(double rows, double vocab, double hidden) {
  const auto chunk =
      static_cast<double>(linear_cross_entropy_chunk_rows(static_cast<int64_t>(rows)));
  return 4 * (chunk * vocab + vocab * hidden + rows * hidden);
}

// `operand`: the bytes of a saved product operand, 2 (bf16 products) or 4.
Shape bert_shape(const RunConfig& c, const TaskData& d, double operand) {
  const nn::BertConfig m = bert_config(c, d);
  const double h = m.hidden_size, ffn = m.intermediate_size, layers = m.num_hidden_layers;
  const double heads = m.num_attention_heads, T = c.data.max_seq_length;
  const double tokens = batch_rows(c, d) * T;
  Shape s;
  s.parameters = (m.vocab_size + m.max_position_embeddings + m.type_vocab_size) * h + 2 * h +
                 layers * layer_parameters(h, ffn) + h * h + 3 * h + m.vocab_size;
  const double keys =
      kept_keys(batch_rows(c, d), heads, T, T, false, m.position_embedding_type != "absolute");
  const double per_token = layer_bytes_per_token(h, ffn, heads, keys, operand);
  s.activation_bytes = stack_activations(c, layers, tokens, per_token, h) +
                       step_workspace(tokens, heads, keys, h, ffn);
  if (c.task == "mlm") {
    // Under the masked-LM head the last layer runs its queries, attention and all after them
    // at the masked positions alone: it keeps its input and keys and values at every position
    // and the rest at those. The head runs at them only.
    const double p = c.data.mlm_probability;
    if (!c.train.gradient_checkpointing) {
      s.activation_bytes -= tokens * (per_token - (operand * 3 * h + p * per_token));
    }
    s.activation_bytes += head_bytes(tokens * p, m.vocab_size, h);
  }
  return s;
}

Shape gpt_shape(const RunConfig& c, const TaskData& d, double operand) {
  const nn::GPT2Config m = gpt2_config(c, d);
  const double h = m.n_embd, ffn = m.inner_size(), layers = m.n_layer;
  const double heads = m.n_head, T = c.data.max_seq_length;
  const double tokens = batch_rows(c, d) * T;
  Shape s;
  s.parameters = (m.vocab_size + m.n_positions) * h + 2 * h + layers * layer_parameters(h, ffn);
  const double keys = kept_keys(batch_rows(c, d), heads, T, T, true);
  s.activation_bytes =
      stack_activations(c, layers, tokens, layer_bytes_per_token(h, ffn, heads, keys, operand), h) +
      step_workspace(tokens, heads, keys, h, ffn) + head_bytes(tokens, m.vocab_size, h);
  return s;
}

Shape bart_shape(const RunConfig& c, const TaskData& d, double operand) {
  const nn::BartConfig m = bart_config(c, d);
  const double h = m.d_model;
  const double S = c.data.max_source_length, T = c.data.max_target_length;
  const double source = batch_rows(c, d) * S, target = batch_rows(c, d) * T;
  Shape s;
  // Shared embeddings, two position tables, the encoder's layers, and the decoder's, each with
  // a cross-attention block besides.
  s.parameters =
      (m.vocab_size + 2 * m.max_position_embeddings) * h + 4 * h +
      m.encoder_layers * layer_parameters(h, m.encoder_ffn_dim) +
      m.decoder_layers * (layer_parameters(h, m.decoder_ffn_dim) + layer_parameters(h, 0) - h) +
      m.vocab_size;
  s.activation_bytes =
      stack_activations(
          c, m.encoder_layers, source,
          layer_bytes_per_token(h, m.encoder_ffn_dim, m.encoder_attention_heads, S, operand), h) +
      stack_activations(
          c, m.decoder_layers, target,
          layer_bytes_per_token(h, m.decoder_ffn_dim, m.decoder_attention_heads, T, operand) +
              layer_bytes_per_token(h, 0, m.decoder_attention_heads, S, operand),
          h) +
      step_workspace(std::max(source, target), m.encoder_attention_heads, std::max(S, T), h,
                     std::max(m.encoder_ffn_dim, m.decoder_ffn_dim)) +
      head_bytes(target, m.vocab_size, h);
  return s;
}

Shape t5_shape(const RunConfig& c, const TaskData& d, double operand) {
  const nn::T5Config m = t5_config(c, d);
  const double h = m.d_model, inner = m.num_heads * m.d_kv, ffn = m.d_ff;
  const double ffn_in = m.gated() ? 2 : 1;
  const double S = c.data.max_source_length, T = c.data.max_target_length;
  const double source = batch_rows(c, d) * S, target = batch_rows(c, d) * T;
  // No biases: attention's four projections through heads x d_kv, the feed-forward's, one RMS
  // norm per sub-layer; each stack's bias table and final norm; the untied head.
  const double attention = 4 * h * inner + h, feed_forward = (ffn_in + 1) * h * ffn + h;
  const double stack = m.relative_attention_num_buckets * m.num_heads + h;
  Shape s;
  s.parameters = m.vocab_size * h * (m.tie_word_embeddings ? 1 : 2) + 2 * stack +
                 m.num_layers * (attention + feed_forward) +
                 m.decoder_layers() * (2 * attention + feed_forward);
  s.activation_bytes =
      m.num_layers * source * layer_bytes_per_token(h, ffn_in * ffn, m.num_heads, S, operand) +
      m.decoder_layers() * target *
          (layer_bytes_per_token(h, ffn_in * ffn, m.num_heads, T, operand) +
           layer_bytes_per_token(h, 0, m.num_heads, S, operand)) +
      step_workspace(std::max(source, target), m.num_heads, std::max(S, T), h, ffn_in * ffn) +
      head_bytes(target, m.vocab_size, h);
  return s;
}

}  // namespace

MemoryEstimate estimate_memory(const RunConfig& c, const TaskData& d,
                               std::optional<double> trainable) {
  // Without native bf16 products `train` runs train.dtype bf16 in f32, holding what f32 holds.
  return estimate_memory(c, d, trainable, c.train.dtype == DType::bf16 && native_bf16_products());
}

MemoryEstimate estimate_memory(const RunConfig& c, const TaskData& d,
                               std::optional<double> trainable, bool bf16_products) {
  const double operand = bf16_products ? 2 : 4;
  Shape s;
  switch (c.model.arch()) {
    case Arch::kBert:
    case Arch::kRoberta:
    case Arch::kDistilBert:
      s = bert_shape(c, d, operand);
      break;
    case Arch::kGpt2:
      s = gpt_shape(c, d, operand);
      break;
    case Arch::kBart:
      s = bart_shape(c, d, operand);
      break;
    case Arch::kT5:
      s = t5_shape(c, d, operand);
      break;
  }
  // f32 weights, and a bf16 copy of each when the products run in bf16; the trainable ones'
  // gradients and AdamW's two moments (SGD's one; Adafactor's first moment if it keeps one, its
  // factored second moments next to nothing).
  double state = 4;
  if (c.optim.name == OptimizerName::kAdamW) state = 8;
  if (c.optim.name == OptimizerName::kAdafactor) state = c.optim.beta1 > 0 ? 4 : 0;
  const double copy = bf16_products ? 2 : 0;
  const double trained = trainable.value_or(s.parameters);
  return {.parameters = s.parameters,
          .trainable = trained,
          .parameter_bytes = s.parameters * (4 + copy) + trained * (4 + state),
          .activation_bytes = s.activation_bytes,
          .runtime_bytes = kRuntimeBytes + data_bytes(c, d)};
}

}  // namespace heed::train
