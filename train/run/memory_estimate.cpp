#include "train/run/memory_estimate.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <thread>

#include "autograd/ops.h"
#include "train/config/config_origins.h"
#include "train/tasks/model_configs.h"

namespace heed::train {
namespace {

// One Transformer layer: the four attention projections, the feed-forward pair, two LayerNorms.
double layer_parameters(double hidden, double ffn) {
  return 4 * (hidden * hidden + hidden) + 2 * hidden * ffn + ffn + hidden + 4 * hidden;
}

// Floats one layer keeps per token for its backward: inputs of the projections and of the
// LayerNorms, the feed-forward's inner activations before and after GELU, the dropout masks,
// and a row of attention probabilities (and their dropout mask) per head.
double layer_activations_per_token(double hidden, double ffn, double heads, double keys) {
  return 12 * hidden + 3 * ffn + 2 * heads * keys;
}

// What a stack of `layers` layers keeps for backward over `tokens` positions: all that each
// layer saves, or with gradient checkpointing each layer's input and, while one layer is
// recomputed, that layer's working set.
double stack_activations(const RunConfig& c, double layers, double tokens, double per_token,
                         double hidden) {
  if (!c.train.gradient_checkpointing) return layers * tokens * per_token;
  return layers * tokens * hidden + tokens * per_token;
}

// Rows of a micro-batch: train.batch_size, or the whole training set when that is smaller.
double batch_rows(const RunConfig& c, const TaskData& d) {
  const double examples = d.train ? static_cast<double>(d.train->size()) : 0.0;
  const double rows = static_cast<double>(c.train.batch_size);
  return examples > 0 ? std::min(rows, examples) : rows;
}

struct Shape {
  double parameters = 0, activations = 0;  // activations in floats, for the whole micro-batch
};

Shape bert_shape(const RunConfig& c, const TaskData& d) {
  const nn::BertConfig m = bert_config(c, d);
  const double h = m.hidden_size, ffn = m.intermediate_size, layers = m.num_hidden_layers;
  const double tokens = batch_rows(c, d) * c.data.max_seq_length;
  Shape s;
  s.parameters = (m.vocab_size + m.max_position_embeddings + m.type_vocab_size) * h + 2 * h +
                 layers * layer_parameters(h, ffn) + h * h + 3 * h + m.vocab_size;
  s.activations = stack_activations(
      c, layers, tokens,
      layer_activations_per_token(h, ffn, m.num_attention_heads, c.data.max_seq_length), h);
  // The masked-LM head's logits at the masked positions only, a chunk of rows at a time, their
  // gradient written over them (linear_cross_entropy).
  if (c.task == "mlm") {
    const auto masked = static_cast<int64_t>(tokens * c.data.mlm_probability);
    s.activations += static_cast<double>(linear_cross_entropy_chunk_rows(masked)) * m.vocab_size;
  }
  return s;
}

Shape gpt_shape(const RunConfig& c, const TaskData& d) {
  const nn::GPT2Config m = gpt2_config(c, d);
  const double h = m.n_embd, ffn = m.inner_size(), layers = m.n_layer;
  const double tokens = batch_rows(c, d) * c.data.max_seq_length;
  Shape s;
  s.parameters = (m.vocab_size + m.n_positions) * h + 2 * h + layers * layer_parameters(h, ffn);
  // A training step computes the head's logits a chunk of rows at a time, its gradient written
  // over them (linear_cross_entropy: equal chunks of at least 2,048 rows).
  const auto chunk_rows =
      static_cast<double>(linear_cross_entropy_chunk_rows(static_cast<int64_t>(tokens)));
  s.activations =
      stack_activations(c, layers, tokens,
                        layer_activations_per_token(h, ffn, m.n_head, c.data.max_seq_length), h) +
      chunk_rows * m.vocab_size;
  return s;
}

Shape bart_shape(const RunConfig& c, const TaskData& d) {
  const nn::BartConfig m = bart_config(c, d);
  const double h = m.d_model;
  const double source = batch_rows(c, d) * c.data.max_source_length;
  const double target = batch_rows(c, d) * c.data.max_target_length;
  Shape s;
  // Shared embeddings, two position tables, the encoder's layers, and the decoder's, each with
  // a cross-attention block besides.
  s.parameters =
      (m.vocab_size + 2 * m.max_position_embeddings) * h + 4 * h +
      m.encoder_layers * layer_parameters(h, m.encoder_ffn_dim) +
      m.decoder_layers * (layer_parameters(h, m.decoder_ffn_dim) + layer_parameters(h, 0) - h) +
      m.vocab_size;
  s.activations =
      stack_activations(c, m.encoder_layers, source,
                        layer_activations_per_token(h, m.encoder_ffn_dim, m.encoder_attention_heads,
                                                    c.data.max_source_length),
                        h) +
      stack_activations(c, m.decoder_layers, target,
                        layer_activations_per_token(h, m.decoder_ffn_dim, m.decoder_attention_heads,
                                                    c.data.max_target_length) +
                            layer_activations_per_token(h, 0, m.decoder_attention_heads,
                                                        c.data.max_source_length),
                        h) +
      2 * target * m.vocab_size;
  return s;
}

Shape t5_shape(const RunConfig& c, const TaskData& d) {
  const nn::T5Config m = t5_config(c, d);
  const double h = m.d_model, inner = m.num_heads * m.d_kv, ffn = m.d_ff;
  const double ffn_in = m.gated() ? 2 : 1;
  const double source = batch_rows(c, d) * c.data.max_source_length;
  const double target = batch_rows(c, d) * c.data.max_target_length;
  // No biases: attention's four projections through heads x d_kv, the feed-forward's, one RMS
  // norm per sub-layer; each stack's bias table and final norm; the untied head.
  const double attention = 4 * h * inner + h, feed_forward = (ffn_in + 1) * h * ffn + h;
  const double stack = m.relative_attention_num_buckets * m.num_heads + h;
  Shape s;
  s.parameters = m.vocab_size * h * (m.tie_word_embeddings ? 1 : 2) + 2 * stack +
                 m.num_layers * (attention + feed_forward) +
                 m.decoder_layers() * (2 * attention + feed_forward);
  s.activations =
      m.num_layers * source *
          layer_activations_per_token(h, ffn_in * ffn, m.num_heads, c.data.max_source_length) +
      m.decoder_layers() * target *
          (layer_activations_per_token(h, ffn_in * ffn, m.num_heads, c.data.max_target_length) +
           layer_activations_per_token(h, 0, m.num_heads, c.data.max_source_length)) +
      2 * target * m.vocab_size;
  return s;
}

std::optional<double> read_number(const std::string& path, const std::string& after) {
  std::ifstream in(path);
  std::string word;
  while (in >> word) {
    if (after.empty() || word == after) {
      if (!after.empty() && !(in >> word)) return std::nullopt;
      try {
        return std::stod(word);
      } catch (const std::exception&) {
        return std::nullopt;  // "max": no limit
      }
    }
  }
  return std::nullopt;
}

}  // namespace

MemoryEstimate estimate_memory(const RunConfig& c, const TaskData& d,
                               std::optional<double> trainable) {
  Shape s;
  switch (c.model.arch()) {
    case Arch::kBert:
    case Arch::kRoberta:
    case Arch::kDistilBert:
      s = bert_shape(c, d);
      break;
    case Arch::kGpt2:
      s = gpt_shape(c, d);
      break;
    case Arch::kBart:
      s = bart_shape(c, d);
      break;
    case Arch::kT5:
      s = t5_shape(c, d);
      break;
  }
  // f32 weights, and a bf16 copy of each when the products run in bf16; the trainable ones'
  // gradients and AdamW's two moments (SGD's one).
  const double state = c.optim.name == OptimizerName::kAdamW ? 8 : 4;
  const double copy = c.train.dtype == DType::bf16 ? 2 : 0;
  const double trained = trainable.value_or(s.parameters);
  return {.parameters = s.parameters,
          .trainable = trained,
          .parameter_bytes = s.parameters * (4 + copy) + trained * (4 + state),
          .activation_bytes = 4 * s.activations};
}

std::optional<double> available_memory_bytes() {
  std::optional<double> kib = read_number("/proc/meminfo", "MemTotal:");
  std::optional<double> bytes;
  if (kib) bytes = *kib * 1024;
  if (std::optional<double> limit = read_number("/sys/fs/cgroup/memory.max", "")) {
    bytes = bytes ? std::min(*bytes, *limit) : *limit;
  }
  return bytes;
}

std::string format_bytes(double bytes) {
  if (bytes >= 1e12) return fmt::format("{:.0f} TB", bytes / 1e12);
  if (bytes >= 1e9) return fmt::format("{:.2f} GB", bytes / 1e9);
  return fmt::format("{:.0f} MB", bytes / 1e6);
}

void check_memory(const RunConfig& c, const TaskData& data, const Log& log,
                  std::optional<double> trainable) {
  const MemoryEstimate e = estimate_memory(c, data, trainable);
  const std::optional<double> machine = available_memory_bytes();
  const auto count = [](double n) {
    return n >= 1e9 ? fmt::format("{:.1f}B", n / 1e9) : fmt::format("{:.1f}M", n / 1e6);
  };
  const std::string parameters =
      e.trainable == e.parameters
          ? fmt::format("{} parameters with gradients and optimizer state", count(e.parameters))
          : fmt::format("{} parameters, {} of them with gradients and optimizer state",
                        count(e.parameters),
                        e.trainable >= 1e5 ? count(e.trainable)
                                           : fmt::format("{:.1f}K", e.trainable / 1e3));
  const std::string estimate =
      fmt::format("about {} ({}: {}; activations of a micro-batch of {}: {})",
                  format_bytes(e.total()), parameters, format_bytes(e.parameter_bytes),
                  batch_rows(c, data), format_bytes(e.activation_bytes));
  if (machine && e.total() > *machine && c.train.check_memory) {
    config_fail(c.origins.where("model"),
                "model: the run needs {}, more than this machine's {}; make the model or "
                "train.batch_size smaller, or set train.check_memory: false to try anyway",
                estimate, format_bytes(*machine));
  }
  log(fmt::format("memory: {}{}", estimate,
                  machine ? fmt::format(" of the machine's {}", format_bytes(*machine)) : ""));
}

void warn_of_oversubscription(const RunConfig& c, int ranks_here, const Log& log) {
  const unsigned cpus = std::thread::hardware_concurrency();
  const int64_t ranks = ranks_here;
  if (c.train.threads * ranks > static_cast<int64_t>(cpus) && cpus > 0) {
    log(fmt::format(
        "warning: train.threads {}{} is more than the {} CPUs here; steps will be slower than "
        "with {}",
        c.train.threads, ranks > 1 ? fmt::format(" × {} ranks", ranks) : "", cpus,
        std::max<int64_t>(1, cpus / ranks)));
  }
}

}  // namespace heed::train
