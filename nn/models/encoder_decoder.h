#pragma once
// An encoder-decoder Transformer in the BART layout (post-LN, learned positions offset by 2,
// layernorm_embedding, shared token embeddings tied to the LM head, final_logits_bias), as
// Hugging Face's modeling_bart (BartForConditionalGeneration).
#include <memory>
#include <string>
#include <vector>

#include "nn/embedding.h"
#include "nn/kv_cache.h"
#include "nn/layer_norm.h"
#include "nn/models/config_fields.h"
#include "nn/models/model_io.h"
#include "nn/models/seq2seq_model.h"
#include "nn/transformer_layers.h"

namespace heed::nn {

// Field names and defaults are Hugging Face's BartConfig.
struct BartConfig {
  int64_t vocab_size = 50265;
  int64_t max_position_embeddings = 1024;
  int64_t d_model = 1024;
  int64_t encoder_layers = 12;
  int64_t decoder_layers = 12;
  int64_t encoder_attention_heads = 16;
  int64_t decoder_attention_heads = 16;
  int64_t encoder_ffn_dim = 4096;
  int64_t decoder_ffn_dim = 4096;
  std::string activation_function = "gelu";
  double dropout = 0.1;
  double attention_dropout = 0.0;
  double activation_dropout = 0.0;
  double init_std = 0.02;
  bool scale_embedding = false;
  int64_t pad_token_id = 1;
  int64_t bos_token_id = 0;
  int64_t eos_token_id = 2;
  int64_t decoder_start_token_id = 2;

  // Every field once (nn/models/config_fields.h).
  template <typename Self, typename V>
  static void visit(Self& c, V& v) {
    using namespace field;
    v.field("vocab_size", c.vocab_size, {.rule = AtLeast{1}, .source = Source::kTokenizerOrData});
    v.field("max_position_embeddings", c.max_position_embeddings, {.rule = AtLeast{1}});
    v.field("d_model", c.d_model, {.rule = AtLeast{1}});
    v.field("encoder_layers", c.encoder_layers, {.rule = AtLeast{1}});
    v.field("decoder_layers", c.decoder_layers, {.rule = AtLeast{1}});
    v.field("encoder_attention_heads", c.encoder_attention_heads, {.rule = AtLeast{1}});
    v.field("decoder_attention_heads", c.decoder_attention_heads, {.rule = AtLeast{1}});
    v.field("encoder_ffn_dim", c.encoder_ffn_dim, {.rule = AtLeast{1}});
    v.field("decoder_ffn_dim", c.decoder_ffn_dim, {.rule = AtLeast{1}});
    v.field("activation_function", c.activation_function,
            {.rule = OneOf{kActivationNames, "activation"}});
    v.field("dropout", c.dropout, {.rule = Probability{}});
    v.field("attention_dropout", c.attention_dropout, {.rule = Probability{}});
    v.field("activation_dropout", c.activation_dropout, {.rule = Probability{}});
    v.field("init_std", c.init_std, {.rule = Positive{}});
    v.field("scale_embedding", c.scale_embedding, {});
    const Field looked_up{.rule = TokenId{.looked_up = true}, .source = Source::kTokenizerOrData};
    const Field marker{.rule = TokenId{}, .source = Source::kTokenizerOrData};
    v.field("pad_token_id", c.pad_token_id, looked_up);
    v.field("bos_token_id", c.bos_token_id, marker);
    v.field("eos_token_id", c.eos_token_id, marker);
    v.field("decoder_start_token_id", c.decoder_start_token_id, looked_up);
    v.divides("encoder_attention_heads", c.encoder_attention_heads, "d_model", c.d_model);
    v.divides("decoder_attention_heads", c.decoder_attention_heads, "d_model", c.d_model);
  }
  // Throws naming the field when a value is impossible, or one heed does not implement.
  void validate() const;
};

// BART's learned positions: row p + 2 holds position p (the first two rows are unused).
class LearnedPositions : public Module {
 public:
  static constexpr int64_t kOffset = 2;
  LearnedPositions(int64_t positions, int64_t dim, Generator& init, double std, DType dtype);
  Tensor forward(int64_t length, int64_t start = 0) const;  // positions [start, start + T): [T, C]
  Tensor weight;
  int64_t positions;
};

class BartStack : public Module {
 public:
  BartStack(const BartConfig& config, bool decoder, std::shared_ptr<Embedding> shared,
            Generator& init, std::shared_ptr<Generator> dropout_gen, DType dtype);
  // Token and position embeddings of ids [B, T] at positions [start, start + T).
  Tensor embed(const Tensor& ids, int64_t start = 0) const;

  BartConfig config;
  std::shared_ptr<Embedding> embed_tokens;
  std::shared_ptr<LearnedPositions> embed_positions;
  std::shared_ptr<LayerNorm> layernorm_embedding;
  std::shared_ptr<Dropout> dropout;
  std::vector<std::shared_ptr<EncoderLayer>> encoder_layers;
  std::vector<std::shared_ptr<DecoderLayer>> decoder_layers;
};

class EncoderDecoder : public Seq2SeqModel {
 public:
  EncoderDecoder(const BartConfig& config, uint64_t seed, DType dtype = DType::f32);
  std::string model_type() const override { return "bart"; }
  std::string architecture() const override { return "BartForConditionalGeneration"; }
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
  int64_t max_positions() const override { return config.max_position_embeddings; }

  BartConfig config;
  std::shared_ptr<Embedding> shared;
  std::shared_ptr<BartStack> encoder, decoder;
  Tensor final_logits_bias;  // buffer [1, V]
};

}  // namespace heed::nn
