#pragma once
// BERT (post-LN encoder) and its heads, laid out as Hugging Face's modeling_bert, so that
// named_parameters() are the checkpoint's names. RoBERTa (roberta.h) and DistilBERT
// (distilbert.h) are this encoder with other position ids, names and heads: EncoderLayout and
// EncoderFamily hold what differs.
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

// How a family of BERT's layout numbers the positions it looks up.
enum class PositionIds {
  kFromZero,  // BERT, DistilBERT: 0, 1, ..., T - 1
  // RoBERTa (Hugging Face's create_position_ids_from_input_ids): a real token's position is
  // pad_token_id + its count among the real tokens so far; padding gets pad_token_id.
  kAfterPadding,
};

// What BERT, RoBERTa and DistilBERT's encoders differ in besides their config values: position
// ids, token types, and the names of the layers' parts. The defaults are BERT's.
struct EncoderLayout {
  PositionIds positions = PositionIds::kFromZero;
  bool token_types = true;  // DistilBERT has none
  std::string layers = "encoder.layer.";
  std::string attention = "attention";
  AttentionNames attention_names{"self.query", "self.key", "self.value", "output.dense",
                                 "self.distance_embedding"};
  std::string attention_norm = "attention.output.LayerNorm";
  std::string feed_forward = "";
  std::string ffn_in = "intermediate.dense", ffn_out = "output.dense";
  std::string final_norm = "output.LayerNorm";
  // DistilBERT applies no dropout to the attention block's output (only to the FFN's).
  bool attention_output_dropout = true;
  // DistilBERT: a sinusoidal table is the buffer embeddings.position_embeddings.weight, where
  // Hugging Face keeps it (an Embedding without a gradient), so that checkpoints carry it both
  // ways. BERT's own sinusoidal option keeps it out of checkpoints.
  bool sinusoidal_table_in_checkpoint = false;
};

// position ids [B, T] (i64) for input_ids [B, T] under `scheme`; throws when one does not fit
// a table of max_positions rows.
Tensor encoder_position_ids(const Tensor& input_ids, PositionIds scheme, int64_t pad_token_id,
                            int64_t max_positions);

class BertEmbeddings : public Module {
 public:
  BertEmbeddings(const BertConfig& config, Generator& init, std::shared_ptr<Generator> dropout_gen,
                 DType dtype, const EncoderLayout& layout = {});
  Tensor forward(const Tensor& input_ids, const Tensor& token_type_ids) const;

  std::shared_ptr<Embedding> word_embeddings, position_embeddings, token_type_embeddings;
  // When position_embedding_type == "sinusoidal": fixed, never trained (a buffer if the
  // layout keeps it in checkpoints).
  Tensor sinusoidal_table;
  std::shared_ptr<LayerNorm> layer_norm;
  std::shared_ptr<Dropout> dropout;
  int64_t max_positions, pad_token_id;
  PositionIds positions;
  std::string position_embedding_type;
};

class BertModel : public Module {
 public:
  BertModel(const BertConfig& config, Generator& init, std::shared_ptr<Generator> dropout_gen,
            bool add_pooling_layer, DType dtype = DType::f32, const EncoderLayout& layout = {});
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
  EncoderLayout layout;
  std::shared_ptr<BertEmbeddings> embeddings;
  std::vector<std::shared_ptr<EncoderLayer>> layers;
  std::shared_ptr<Linear> pooler;  // null without a pooling layer
};

// A family of BERT's layout: its Hugging Face identity and names, the one table in which
// BERT, RoBERTa and DistilBERT differ (bert_family(), roberta_family(), distilbert_family()).
struct EncoderFamily {
  std::string model_type;  // config.json's model_type: "bert"
  std::string body;        // the encoder's name, which checkpoints may leave off: "bert"
  EncoderLayout layout;
  // The masked-LM head: dense, activation, LayerNorm, then the tied decoder and its bias.
  std::string mlm_dense, mlm_norm, mlm_bias;
  std::string mlm_decoder;  // the decoder's names in checkpoints: ".weight" tied, ".bias" = bias
  bool mlm_head_uses_hidden_act = true;  // RoBERTa's lm_head always uses exact GELU
  std::string architecture_prefix;       // "Bert": BertForMaskedLM
};
const EncoderFamily& bert_family();

// Everything every BERT-layout model shares: the encoder and its checkpoint conventions.
class BertBase : public PretrainedModel {
 public:
  std::string model_type() const override { return family.model_type; }
  nlohmann::json config_json() const override;
  std::string base_prefix() const override { return family.body + "."; }
  bool ignores_checkpoint_name(const std::string& name) const override;
  std::string canonical_checkpoint_name(const std::string& name) const override;

  BertConfig config;
  EncoderFamily family = bert_family();
  // The encoder, registered under family.body ("bert", "roberta").
  std::shared_ptr<BertModel> bert;

 protected:
  // Builds the encoder (with or without the pooler) under the family's name.
  void build_body(const BertConfig& c, const EncoderFamily& f, Generator& init, DType dtype,
                  bool pooler);
  // The body both classification heads share (defined in bert.cpp, used only there).
  template <typename Head>
  static void build_classification_head(Head& head, const BertConfig& c, uint64_t seed, DType dtype,
                                        bool pooler, const EncoderFamily& family);
};

// The flat [B * T] indices of each sequence's first token ([CLS], <s>), i64 [B].
Tensor first_token_rows(const Tensor& input_ids);

// Hugging Face's classification losses: mean squared error for one label (a regression
// head), else cross-entropy over labels != -100.
Tensor sequence_classification_loss(const Tensor& logits, const Tensor& labels, int64_t num_labels,
                                    double label_smoothing);

class BertForMaskedLM : public BertBase {
 public:
  BertForMaskedLM(const BertConfig& config, uint64_t seed, DType dtype = DType::f32)
      : BertForMaskedLM(config, seed, dtype, bert_family()) {}
  // logits [B, T, V]; loss: cross-entropy over labels != -100.
  ModelOutputs forward(const ModelInputs& inputs) const override;
  std::string architecture() const override { return family.architecture_prefix + "ForMaskedLM"; }

  std::shared_ptr<Linear> transform;
  std::shared_ptr<LayerNorm> transform_norm;
  Tensor decoder_bias;  // cls.predictions.bias; the decoder weight is the word embeddings

 protected:
  BertForMaskedLM(const BertConfig& config, uint64_t seed, DType dtype,
                  const EncoderFamily& family);

 private:
  Tensor head(const Tensor& h) const;  // the transform before the decoder
  // forward with only_labeled_logits: the last layer and the head on the labelled rows alone.
  ModelOutputs forward_labelled(const ModelInputs& inputs) const;
  // forward with output_rows: the last layer and the head on those rows.
  ModelOutputs forward_rows(const ModelInputs& inputs) const;
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
  BertForTokenClassification(const BertConfig& config, uint64_t seed, DType dtype = DType::f32)
      : BertForTokenClassification(config, seed, dtype, bert_family()) {}
  // logits [B, T, num_labels]; loss: cross-entropy over labels != -100.
  ModelOutputs forward(const ModelInputs& inputs) const override;
  std::string architecture() const override {
    return family.architecture_prefix + "ForTokenClassification";
  }

  std::shared_ptr<Dropout> dropout;
  std::shared_ptr<Linear> classifier;

 protected:
  BertForTokenClassification(const BertConfig& config, uint64_t seed, DType dtype,
                             const EncoderFamily& family);
};

}  // namespace heed::nn
