#pragma once
// BERT (post-LN encoder) and its heads, laid out as Hugging Face's modeling_bert, so that
// named_parameters() are the checkpoint's names.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nn/embedding.h"
#include "nn/layer_norm.h"
#include "nn/models/config_fields.h"
#include "nn/models/model_io.h"
#include "nn/models/pretrained.h"
#include "nn/transformer_layers.h"

namespace heed::nn {

// Field names and defaults are Hugging Face's BertConfig.
struct BertConfig {
  int64_t vocab_size = 30522;
  int64_t hidden_size = 768;
  int64_t num_hidden_layers = 12;
  int64_t num_attention_heads = 12;
  int64_t intermediate_size = 3072;
  std::string hidden_act = "gelu";
  double hidden_dropout_prob = 0.1;
  double attention_probs_dropout_prob = 0.1;
  int64_t max_position_embeddings = 512;
  int64_t type_vocab_size = 2;
  double initializer_range = 0.02;
  double layer_norm_eps = 1e-12;
  int64_t pad_token_id = 0;
  // "absolute" (learned, as BERT); "relative_key" or "relative_key_query" (a learned distance
  // table in each layer's attention, nn/relative_positions.h; the absolute table is kept but
  // not added, as Hugging Face's); or "sinusoidal" (the fixed table of the original
  // Transformer; heed's extension, stored as a buffer, not a parameter).
  std::string position_embedding_type = "absolute";
  int64_t num_labels = 2;
  std::optional<double> classifier_dropout;
  std::vector<std::string> id2label;  // label names, if known (config.json's id2label)

  // Every field once (nn/models/config_fields.h).
  template <typename Self, typename V>
  static void visit(Self& c, V& v) {
    using namespace field;
    v.field("vocab_size", c.vocab_size, {.rule = AtLeast{1}, .source = Source::kTokenizerOrData});
    v.field("hidden_size", c.hidden_size, {.rule = AtLeast{1}});
    v.field("num_hidden_layers", c.num_hidden_layers, {.rule = AtLeast{1}});
    v.field("num_attention_heads", c.num_attention_heads, {.rule = AtLeast{1}});
    v.field("intermediate_size", c.intermediate_size, {.rule = AtLeast{1}});
    v.field("hidden_act", c.hidden_act, {.rule = OneOf{kActivationNames, "activation"}});
    v.field("hidden_dropout_prob", c.hidden_dropout_prob, {.rule = Probability{}});
    v.field("attention_probs_dropout_prob", c.attention_probs_dropout_prob,
            {.rule = Probability{}});
    v.field("max_position_embeddings", c.max_position_embeddings, {.rule = AtLeast{1}});
    v.field("type_vocab_size", c.type_vocab_size, {.rule = AtLeast{1}});
    v.field("initializer_range", c.initializer_range, {.rule = Positive{}});
    v.field("layer_norm_eps", c.layer_norm_eps, {.rule = Positive{}});
    v.field("pad_token_id", c.pad_token_id,
            {.rule = TokenId{.looked_up = true}, .source = Source::kTokenizerOrData});
    v.field("position_embedding_type", c.position_embedding_type,
            {.rule = OneOf{kPositionEmbeddingNames, "position embedding type"}});
    v.field("num_labels", c.num_labels,
            {.rule = AtLeast{1}, .source = Source::kTokenizerOrData, .written_to_json = false});
    v.field("classifier_dropout", c.classifier_dropout, {.rule = Probability{}});
    v.divides("num_attention_heads", c.num_attention_heads, "hidden_size", c.hidden_size);
  }
  // Throws naming the field when a value is impossible.
  void validate() const { check_config_fields(*this, "BertConfig"); }
};

class BertEmbeddings : public Module {
 public:
  BertEmbeddings(const BertConfig& config, Generator& init, std::shared_ptr<Generator> dropout_gen,
                 DType dtype);
  Tensor forward(const Tensor& input_ids, const Tensor& token_type_ids) const;

  std::shared_ptr<Embedding> word_embeddings, position_embeddings, token_type_embeddings;
  Tensor sinusoidal_table;  // when position_embedding_type == "sinusoidal"
  std::shared_ptr<LayerNorm> layer_norm;
  std::shared_ptr<Dropout> dropout;
  int64_t max_positions;
  std::string position_embedding_type;
};

class BertModel : public Module {
 public:
  BertModel(const BertConfig& config, Generator& init, std::shared_ptr<Generator> dropout_gen,
            bool add_pooling_layer, DType dtype = DType::f32);
  // Returns the last hidden states [B, T, H]; `attentions`, if given, receives each layer's
  // attention probabilities [B, h, T, T]. With output_rows (i64 [M], indices into the
  // flattened [B * T] positions) it returns those rows alone, [M, H], and the last layer
  // computes nothing after its attention for the other rows.
  Tensor forward(const Tensor& input_ids, const Tensor& attention_mask = Tensor(),
                 const Tensor& token_type_ids = Tensor(), std::vector<Tensor>* attentions = nullptr,
                 const Tensor& output_rows = Tensor()) const;
  // tanh(dense(cls)) for the [CLS] rows [B, H]: the summary for sequence classification.
  Tensor pool(const Tensor& cls) const;

  BertConfig config;
  std::shared_ptr<BertEmbeddings> embeddings;
  std::vector<std::shared_ptr<EncoderLayer>> layers;
  std::shared_ptr<Linear> pooler;  // null without a pooling layer
};

// Everything every BERT model shares: the encoder and its checkpoint conventions.
class BertBase : public PretrainedModel {
 public:
  std::string model_type() const override { return "bert"; }
  nlohmann::json config_json() const override;
  std::string base_prefix() const override { return "bert."; }
  bool ignores_checkpoint_name(const std::string& name) const override;
  std::string canonical_checkpoint_name(const std::string& name) const override;

  BertConfig config;
  std::shared_ptr<BertModel> bert;

 protected:
  // The body both classification heads share (defined in bert.cpp, used only there).
  template <typename Head>
  static void build_classification_head(Head& head, const BertConfig& c, uint64_t seed, DType dtype,
                                        bool pooler);
};

class BertForMaskedLM : public BertBase {
 public:
  BertForMaskedLM(const BertConfig& config, uint64_t seed, DType dtype = DType::f32);
  // logits [B, T, V]; loss: cross-entropy over labels != -100.
  ModelOutputs forward(const ModelInputs& inputs) const override;
  std::string architecture() const override { return "BertForMaskedLM"; }

  std::shared_ptr<Linear> transform;
  std::shared_ptr<LayerNorm> transform_norm;
  Tensor decoder_bias;  // cls.predictions.bias; the decoder weight is the word embeddings

 private:
  // forward with only_labeled_logits: the last layer and the head on the labelled rows alone.
  ModelOutputs forward_labelled(const ModelInputs& inputs) const;
};

class BertForSequenceClassification : public BertBase {
 public:
  BertForSequenceClassification(const BertConfig& config, uint64_t seed, DType dtype = DType::f32);
  // logits [B, num_labels]; loss: cross-entropy (mean squared error if num_labels == 1).
  ModelOutputs forward(const ModelInputs& inputs) const override;
  std::string architecture() const override { return "BertForSequenceClassification"; }

  std::shared_ptr<Dropout> dropout;
  std::shared_ptr<Linear> classifier;
};

class BertForTokenClassification : public BertBase {
 public:
  BertForTokenClassification(const BertConfig& config, uint64_t seed, DType dtype = DType::f32);
  // logits [B, T, num_labels]; loss: cross-entropy over labels != -100.
  ModelOutputs forward(const ModelInputs& inputs) const override;
  std::string architecture() const override { return "BertForTokenClassification"; }

  std::shared_ptr<Dropout> dropout;
  std::shared_ptr<Linear> classifier;
};

}  // namespace heed::nn
