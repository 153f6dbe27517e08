#pragma once
// T5 (Raffel et al. 2020) as Hugging Face's modeling_t5 (T5ForConditionalGeneration): v1.0
// (ReLU feed-forward, head tied to the shared embedding and scaled by d_model^-0.5) and v1.1
// (gated-gelu feed-forward, untied lm_head). Pre-norm blocks with RMS norms, no biases, scores
// without 1/sqrt(d), and a bucketed relative attention bias learned by block 0 of each stack
// and added by every layer of it. The layers are the shared EncoderLayer and DecoderLayer
// (nn/transformer_layers.h) under T5's names.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nn/embedding.h"
#include "nn/linear.h"
#include "nn/models/config_fields.h"
#include "nn/models/seq2seq_model.h"
#include "nn/relative_attention_bias.h"
#include "nn/transformer_layers.h"

namespace heed::nn {

inline constexpr std::array<std::string_view, 2> kT5FeedForwardNames{"relu", "gated-gelu"};

// Field names and defaults are Hugging Face's T5Config (t5-small's shape).
struct T5Config {
  int64_t vocab_size = 32128;
  int64_t d_model = 512;
  int64_t d_kv = 64;
  int64_t d_ff = 2048;
  int64_t num_layers = 6;
  std::optional<int64_t> num_decoder_layers;  // unset: num_layers
  int64_t num_heads = 8;
  int64_t relative_attention_num_buckets = 32;
  int64_t relative_attention_max_distance = 128;
  double dropout_rate = 0.1;
  double layer_norm_epsilon = 1e-6;
  double initializer_factor = 1.0;
  std::string feed_forward_proj = "relu";
  bool tie_word_embeddings = true;
  int64_t pad_token_id = 0;
  int64_t eos_token_id = 1;
  int64_t decoder_start_token_id = 0;

  int64_t decoder_layers() const { return num_decoder_layers.value_or(num_layers); }
  bool gated() const { return feed_forward_proj == "gated-gelu"; }

  // Every field once (nn/models/config_fields.h).
  template <typename Self, typename V>
  static void visit(Self& c, V& v) {
    using namespace field;
    v.field("vocab_size", c.vocab_size, {.rule = AtLeast{1}, .source = Source::kTokenizerOrData});
    v.field("d_model", c.d_model, {.rule = AtLeast{1}});
    v.field("d_kv", c.d_kv, {.rule = AtLeast{1}});
    v.field("d_ff", c.d_ff, {.rule = AtLeast{1}});
    v.field("num_layers", c.num_layers, {.rule = AtLeast{1}});
    v.field("num_decoder_layers", c.num_decoder_layers, {.rule = AtLeast{1}});
    v.field("num_heads", c.num_heads, {.rule = AtLeast{1}});
    v.field("relative_attention_num_buckets", c.relative_attention_num_buckets,
            {.rule = AtLeast{4}});
    v.field("relative_attention_max_distance", c.relative_attention_max_distance,
            {.rule = AtLeast{2}});
    v.field("dropout_rate", c.dropout_rate, {.rule = Probability{}});
    v.field("layer_norm_epsilon", c.layer_norm_epsilon, {.rule = Positive{}});
    v.field("initializer_factor", c.initializer_factor, {.rule = Positive{}});
    v.field("feed_forward_proj", c.feed_forward_proj,
            {.rule = OneOf{kT5FeedForwardNames, "feed_forward_proj"}});
    v.field("tie_word_embeddings", c.tie_word_embeddings, {});
    const Field looked_up{.rule = TokenId{.looked_up = true}, .source = Source::kTokenizerOrData};
    v.field("pad_token_id", c.pad_token_id, looked_up);
    v.field("eos_token_id", c.eos_token_id,
            {.rule = TokenId{}, .source = Source::kTokenizerOrData});
    v.field("decoder_start_token_id", c.decoder_start_token_id, looked_up);
  }
  // Throws naming the field when a value is impossible.
  void validate() const;
};

// One stack: the encoder (bidirectional bias) or the decoder (causal bias, cross-attention).
class T5Stack : public Module {
 public:
  T5Stack(const T5Config& config, bool decoder, std::shared_ptr<Embedding> shared, Generator& init,
          std::shared_ptr<Generator> dropout_gen, DType dtype);

  T5Config config;
  std::shared_ptr<Embedding> embed_tokens;
  // Block 0's table, which every block of the stack adds.
  std::shared_ptr<RelativeAttentionBias> relative_attention_bias;
  std::vector<std::shared_ptr<EncoderLayer>> encoder_blocks;
  std::vector<std::shared_ptr<DecoderLayer>> decoder_blocks;
  std::shared_ptr<LayerNorm> final_layer_norm;
  std::shared_ptr<Dropout> dropout;
};

class T5ForConditionalGeneration : public Seq2SeqModel {
 public:
  T5ForConditionalGeneration(const T5Config& config, uint64_t seed, DType dtype = DType::f32);
  std::string model_type() const override { return "t5"; }
  std::string architecture() const override { return "T5ForConditionalGeneration"; }
  nlohmann::json config_json() const override;
  bool ignores_checkpoint_name(const std::string& name) const override;

  // Seq2SeqModel's.
  Tensor encode(const Tensor& input_ids, const Tensor& attention_mask = Tensor(),
                std::vector<Tensor>* attentions = nullptr) const override;
  Tensor decode(const Tensor& decoder_input_ids, const Tensor& memory,
                const Tensor& memory_mask = Tensor(),
                const Tensor& decoder_attention_mask = Tensor(), KVCache* cache = nullptr,
                ModelOutputs* attentions = nullptr) const override;
  Seq2SeqTokens special_tokens() const override;
  int64_t max_positions() const override;

  T5Config config;
  std::shared_ptr<Embedding> shared;
  std::shared_ptr<T5Stack> encoder, decoder;
  std::shared_ptr<Linear> lm_head;  // null when tied to `shared`
};

}  // namespace heed::nn
