#include "nn/models/distilbert.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <string_view>
#include <utility>

#include "autograd/ops.h"
#include "nn/models/config_json.h"

namespace heed::nn {

BertConfig DistilBertConfig::encoder_config() const {
  validate();
  BertConfig b;
  b.vocab_size = vocab_size;
  b.hidden_size = dim;
  b.num_hidden_layers = n_layers;
  b.num_attention_heads = n_heads;
  b.intermediate_size = hidden_dim;
  b.hidden_act = activation;
  b.hidden_dropout_prob = dropout;
  b.attention_probs_dropout_prob = attention_dropout;
  b.max_position_embeddings = max_position_embeddings;
  b.type_vocab_size = 1;  // unused: DistilBERT's layout has no token types
  b.initializer_range = initializer_range;
  b.layer_norm_eps = kLayerNormEps;
  b.pad_token_id = pad_token_id;
  b.position_embedding_type = sinusoidal_pos_embds ? "sinusoidal" : "absolute";
  b.num_labels = num_labels;
  // The token classifier's dropout is `dropout` (BertConfig's fallback for no
  // classifier_dropout); the sequence classifier's is its own seq_classif_dropout.
  b.classifier_dropout = std::nullopt;
  b.id2label = id2label;
  return b;
}

const EncoderFamily& distilbert_family() {
  static const EncoderFamily family{
      .model_type = "distilbert",
      .body = "distilbert",
      .layout = {.positions = PositionIds::kFromZero,
                 .token_types = false,
                 .layers = "transformer.layer.",
                 .attention = "attention",
                 .attention_names = {"q_lin", "k_lin", "v_lin", "out_lin", "distance_embedding"},
                 .attention_norm = "sa_layer_norm",
                 .feed_forward = "ffn",
                 .ffn_in = "lin1",
                 .ffn_out = "lin2",
                 .final_norm = "output_layer_norm",
                 .attention_output_dropout = false,
                 .sinusoidal_table_in_checkpoint = true},
      .mlm_dense = "vocab_transform",
      .mlm_norm = "vocab_layer_norm",
      .mlm_bias = "vocab_projector.bias",
      .mlm_decoder = "vocab_projector",
      .mlm_head_uses_hidden_act = true,  // get_activation(config.activation)
      .architecture_prefix = "DistilBert"};
  return family;
}

nlohmann::json distilbert_config_json(const DistilBertConfig& config,
                                      const std::string& architecture) {
  nlohmann::json j = to_json(config);
  j["architectures"] = {architecture};
  return j;
}

DistilBertForMaskedLM::DistilBertForMaskedLM(const DistilBertConfig& c, uint64_t seed, DType dtype)
    : BertForMaskedLM(c.encoder_config(), seed, dtype, distilbert_family()), distil_config(c) {}

DistilBertForSequenceClassification::DistilBertForSequenceClassification(const DistilBertConfig& c,
                                                                         uint64_t seed, DType dtype)
    : distil_config(c) {
  Generator init(seed);
  dropout_generator = std::make_shared<Generator>(seed + 1);
  const BertConfig b = c.encoder_config();
  build_body(b, distilbert_family(), init, dtype, /*pooler=*/false);
  pre_classifier = register_module(
      "pre_classifier",
      std::make_shared<Linear>(c.dim, c.dim, init, true, c.initializer_range, dtype));
  classifier = register_module(
      "classifier",
      std::make_shared<Linear>(c.dim, c.num_labels, init, true, c.initializer_range, dtype));
  dropout = register_module("dropout",
                            std::make_shared<Dropout>(c.seq_classif_dropout, dropout_generator));
}

ModelOutputs DistilBertForSequenceClassification::forward(const ModelInputs& in) const {
  ModelOutputs out;
  // Only the first token's rows reach the head: the last layer computes them alone after
  // attention.
  Tensor x = bert->forward(in.input_ids, in.attention_mask, in.token_type_ids,
                           in.output_attentions ? &out.attentions : nullptr,
                           first_token_rows(in.input_ids));
  x = dropout->forward(relu(pre_classifier->forward(x)));
  out.logits = classifier->forward(x);
  if (in.labels.defined()) {
    out.loss = sequence_classification_loss(out.logits, in.labels, distil_config.num_labels,
                                            in.label_smoothing);
  }
  return out;
}

DistilBertForTokenClassification::DistilBertForTokenClassification(const DistilBertConfig& c,
                                                                   uint64_t seed, DType dtype)
    : BertForTokenClassification(c.encoder_config(), seed, dtype, distilbert_family()),
      distil_config(c) {}

namespace {

// What one BERT layer's tensors are called in a DistilBERT layer (Sanh et al.'s
// extract_distilbert.py), without the .weight / .bias ending.
constexpr std::array<std::pair<std::string_view, std::string_view>, 8> kLayerParts{{
    {"attention.self.query", "attention.q_lin"},
    {"attention.self.key", "attention.k_lin"},
    {"attention.self.value", "attention.v_lin"},
    {"attention.output.dense", "attention.out_lin"},
    {"attention.output.LayerNorm", "sa_layer_norm"},
    {"intermediate.dense", "ffn.lin1"},
    {"output.dense", "ffn.lin2"},
    {"output.LayerNorm", "output_layer_norm"},
}};

// The tensors outside the layers that carry over, whole names.
constexpr std::array<std::pair<std::string_view, std::string_view>, 10> kOtherTensors{{
    {"bert.embeddings.word_embeddings.weight", "distilbert.embeddings.word_embeddings.weight"},
    {"bert.embeddings.position_embeddings.weight",
     "distilbert.embeddings.position_embeddings.weight"},
    {"bert.embeddings.LayerNorm.weight", "distilbert.embeddings.LayerNorm.weight"},
    {"bert.embeddings.LayerNorm.bias", "distilbert.embeddings.LayerNorm.bias"},
    {"cls.predictions.transform.dense.weight", "vocab_transform.weight"},
    {"cls.predictions.transform.dense.bias", "vocab_transform.bias"},
    {"cls.predictions.transform.LayerNorm.weight", "vocab_layer_norm.weight"},
    {"cls.predictions.transform.LayerNorm.bias", "vocab_layer_norm.bias"},
    {"cls.predictions.bias", "vocab_projector.bias"},
    // Hugging Face's alias of cls.predictions.bias; a file holds one or the other.
    {"cls.predictions.decoder.bias", "vocab_projector.bias"},
}};

void check_layer_map(std::span<const int64_t> layer_map) {
  for (size_t i = 0; i < layer_map.size(); ++i) {
    HEED_CHECK(layer_map[i] >= 0, "layer_map: teacher layer {} (for student layer {}) is negative",
               layer_map[i], i);
    for (size_t j = 0; j < i; ++j) {
      HEED_CHECK(layer_map[i] != layer_map[j],
                 "layer_map: teacher layer {} is named twice (student layers {} and {})",
                 layer_map[i], j, i);
    }
  }
}

// `prefix` + N + "." + rest: N and rest, if `name` is a layer tensor under `prefix`.
std::optional<std::pair<int64_t, std::string_view>> split_layer(std::string_view name,
                                                                std::string_view prefix) {
  if (!name.starts_with(prefix)) return std::nullopt;
  name.remove_prefix(prefix.size());
  int64_t index = -1;
  const auto [end, error] = std::from_chars(name.data(), name.data() + name.size(), index);
  if (error != std::errc() || end == name.data() + name.size() || *end != '.') return std::nullopt;
  return std::pair{index, std::string_view(end + 1, name.data() + name.size() - end - 1)};
}

// The ending ".weight" or ".bias" and what it follows.
std::pair<std::string_view, std::string_view> split_ending(std::string_view name) {
  const size_t dot = name.rfind('.');
  if (dot == std::string_view::npos) return {name, ""};
  return {name.substr(0, dot), name.substr(dot)};
}

}  // namespace

std::optional<std::string> distilbert_name_from_bert(const std::string& bert_name,
                                                     std::span<const int64_t> layer_map) {
  check_layer_map(layer_map);
  // Base-model checkpoints leave off `bert.`.
  const bool bare = bert_name.starts_with("embeddings.") || bert_name.starts_with("encoder.");
  const std::string name = bare ? "bert." + bert_name : bert_name;
  for (const auto& [teacher, student] : kOtherTensors) {
    if (name == teacher) return std::string(student);
  }
  const auto layer = split_layer(name, "bert.encoder.layer.");
  if (!layer) return std::nullopt;
  const auto at = std::ranges::find(layer_map, layer->first);
  if (at == layer_map.end()) return std::nullopt;
  const auto [part, ending] = split_ending(layer->second);
  for (const auto& [teacher, student] : kLayerParts) {
    if (part == teacher) {
      return "distilbert.transformer.layer." + std::to_string(at - layer_map.begin()) + "." +
             std::string(student) + std::string(ending);
    }
  }
  return std::nullopt;  // a relative distance table: the student has absolute positions
}

std::optional<std::string> bert_name_for_distilbert(const std::string& distilbert_name,
                                                    std::span<const int64_t> layer_map) {
  check_layer_map(layer_map);
  for (const auto& [teacher, student] : kOtherTensors) {
    if (distilbert_name == student) return std::string(teacher);  // the first: the canonical
  }
  const auto layer = split_layer(distilbert_name, "distilbert.transformer.layer.");
  if (!layer || layer->first >= static_cast<int64_t>(layer_map.size())) return std::nullopt;
  const auto [part, ending] = split_ending(layer->second);
  for (const auto& [teacher, student] : kLayerParts) {
    if (part == student) {
      return "bert.encoder.layer." + std::to_string(layer_map[layer->first]) + "." +
             std::string(teacher) + std::string(ending);
    }
  }
  return std::nullopt;
}

}  // namespace heed::nn
