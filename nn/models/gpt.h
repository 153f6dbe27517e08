#pragma once
// GPT in the GPT-2 layout (pre-LN blocks, fused c_attn in Conv1D [in, out] layout, final
// ln_f, LM head tied to the token embeddings), as Hugging Face's modeling_gpt2.
#include <memory>
#include <string>
#include <vector>

#include "nn/embedding.h"
#include "nn/kv_cache.h"
#include "nn/layer_norm.h"
#include "nn/models/config_fields.h"
#include "nn/models/model_io.h"
#include "nn/models/pretrained.h"
#include "nn/transformer_layers.h"

namespace heed::nn {

// Field names and defaults are Hugging Face's GPT2Config.
struct GPT2Config {
  int64_t vocab_size = 50257;
  int64_t n_positions = 1024;
  int64_t n_embd = 768;
  int64_t n_layer = 12;
  int64_t n_head = 12;
  int64_t n_inner = 0;  // 0 means 4 * n_embd (HF's None)
  std::string activation_function = "gelu_new";
  double resid_pdrop = 0.1;
  double embd_pdrop = 0.1;
  double attn_pdrop = 0.1;
  double layer_norm_epsilon = 1e-5;
  double initializer_range = 0.02;
  int64_t bos_token_id = 50256;
  int64_t eos_token_id = 50256;

  int64_t inner_size() const { return n_inner > 0 ? n_inner : 4 * n_embd; }

  // Every field once (nn/models/config_fields.h).
  template <typename Self, typename V>
  static void visit(Self& c, V& v) {
    using namespace field;
    v.field("vocab_size", c.vocab_size, {.rule = AtLeast{1}, .source = Source::kTokenizerOrData});
    v.field("n_positions", c.n_positions, {.rule = AtLeast{1}});
    v.field("n_embd", c.n_embd, {.rule = AtLeast{1}});
    v.field("n_layer", c.n_layer, {.rule = AtLeast{1}});
    v.field("n_head", c.n_head, {.rule = AtLeast{1}});
    v.field("n_inner", c.n_inner, {.rule = AtLeast{0}});
    v.field("activation_function", c.activation_function,
            {.rule = OneOf{kActivationNames, "activation"}});
    v.field("resid_pdrop", c.resid_pdrop, {.rule = Probability{}});
    v.field("embd_pdrop", c.embd_pdrop, {.rule = Probability{}});
    v.field("attn_pdrop", c.attn_pdrop, {.rule = Probability{}});
    v.field("layer_norm_epsilon", c.layer_norm_epsilon, {.rule = Positive{}});
    v.field("initializer_range", c.initializer_range, {.rule = Positive{}});
    v.field("bos_token_id", c.bos_token_id,
            {.rule = TokenId{}, .source = Source::kTokenizerOrData});
    v.field("eos_token_id", c.eos_token_id,
            {.rule = TokenId{}, .source = Source::kTokenizerOrData});
    v.divides("n_head", c.n_head, "n_embd", c.n_embd);
  }
  // Throws naming the field when a value is impossible.
  void validate() const { check_config_fields(*this, "GPT2Config"); }
};

class GPT : public PretrainedModel {
 public:
  GPT(const GPT2Config& config, uint64_t seed, DType dtype = DType::f32);
  std::string model_type() const override { return "gpt2"; }
  std::string architecture() const override { return "GPT2LMHeadModel"; }
  nlohmann::json config_json() const override;
  std::string base_prefix() const override { return "transformer."; }
  bool ignores_checkpoint_name(const std::string& name) const override;
  // logits [B, T, V]. With labels [B, T], the loss is the next-token cross-entropy of
  // logits at t against labels at t: the labels are already shifted (labels[t] = the token
  // at t + 1, -100 where none counts), as data::collate_causal_lm makes them. Hugging Face's
  // GPT-2 takes unshifted labels; heed keeps the shift in one place, the collator.
  ModelOutputs forward(const ModelInputs& inputs) const override;
  // The last hidden states after ln_f, [B, T, C]. With a cache (decoding), input_ids are the
  // positions after the cached ones, whose keys and values are appended to it;
  // attention_mask then covers the cached positions too. `attentions`, if given, receives
  // each block's attention probabilities [B, heads, T, past + T].
  Tensor hidden_states(const Tensor& input_ids, const Tensor& attention_mask = Tensor(),
                       KVCache* cache = nullptr, std::vector<Tensor>* attentions = nullptr) const;
  // Decoding: the logits [B, T, V] of the T new ids that follow the cache's positions.
  Tensor forward_cached(const Tensor& input_ids, KVCache& cache,
                        const Tensor& attention_mask = Tensor()) const;

  GPT2Config config;
  std::shared_ptr<Embedding> wte, wpe;
  std::shared_ptr<Dropout> drop;
  std::vector<std::shared_ptr<EncoderLayer>> blocks;
  std::shared_ptr<LayerNorm> ln_f;
};

}  // namespace heed::nn
