#include "nn/models/config_json.h"

namespace heed::nn {
namespace {

// Reads j[key] into `field` when present; a wrong type is an error naming the field.
template <typename T>
void read(const nlohmann::json& j, const char* key, T& field) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  try {
    field = it->get<T>();
  } catch (const nlohmann::json::exception& e) {
    fail("config.json: field '{}' has the wrong type ({})", key, it->type_name());
  }
}

nlohmann::json labels_json(const std::vector<std::string>& id2label, int64_t num_labels) {
  nlohmann::json id2 = nlohmann::json::object(), to_id = nlohmann::json::object();
  for (int64_t i = 0; i < num_labels; ++i) {
    const std::string name =
        i < static_cast<int64_t>(id2label.size()) ? id2label[i] : "LABEL_" + std::to_string(i);
    id2[std::to_string(i)] = name;
    to_id[name] = i;
  }
  return {{"id2label", id2}, {"label2id", to_id}};
}

}  // namespace

nlohmann::json to_json(const BertConfig& c) {
  nlohmann::json j = {
      {"model_type", "bert"},
      {"vocab_size", c.vocab_size},
      {"hidden_size", c.hidden_size},
      {"num_hidden_layers", c.num_hidden_layers},
      {"num_attention_heads", c.num_attention_heads},
      {"intermediate_size", c.intermediate_size},
      {"hidden_act", c.hidden_act},
      {"hidden_dropout_prob", c.hidden_dropout_prob},
      {"attention_probs_dropout_prob", c.attention_probs_dropout_prob},
      {"max_position_embeddings", c.max_position_embeddings},
      {"type_vocab_size", c.type_vocab_size},
      {"initializer_range", c.initializer_range},
      {"layer_norm_eps", c.layer_norm_eps},
      {"pad_token_id", c.pad_token_id},
      {"position_embedding_type", c.position_embedding_type},
      {"classifier_dropout", nullptr},
      {"tie_word_embeddings", true},
  };
  if (c.classifier_dropout) j["classifier_dropout"] = *c.classifier_dropout;
  j.update(labels_json(c.id2label, c.num_labels));
  return j;
}

BertConfig bert_config_from_json(const nlohmann::json& j) {
  BertConfig c;
  read(j, "vocab_size", c.vocab_size);
  read(j, "hidden_size", c.hidden_size);
  read(j, "num_hidden_layers", c.num_hidden_layers);
  read(j, "num_attention_heads", c.num_attention_heads);
  read(j, "intermediate_size", c.intermediate_size);
  read(j, "hidden_act", c.hidden_act);
  read(j, "hidden_dropout_prob", c.hidden_dropout_prob);
  read(j, "attention_probs_dropout_prob", c.attention_probs_dropout_prob);
  read(j, "max_position_embeddings", c.max_position_embeddings);
  read(j, "type_vocab_size", c.type_vocab_size);
  read(j, "initializer_range", c.initializer_range);
  read(j, "layer_norm_eps", c.layer_norm_eps);
  read(j, "pad_token_id", c.pad_token_id);
  read(j, "position_embedding_type", c.position_embedding_type);
  if (auto it = j.find("classifier_dropout"); it != j.end() && !it->is_null()) {
    c.classifier_dropout = it->get<double>();
  }
  // Hugging Face derives num_labels from id2label ({"0": "ham", "1": "spam"}).
  if (auto it = j.find("id2label"); it != j.end() && it->is_object()) {
    c.num_labels = static_cast<int64_t>(it->size());
    c.id2label.assign(c.num_labels, "");
    for (auto& [key, value] : it->items()) {
      const int64_t id = std::stoll(key);
      HEED_CHECK(id >= 0 && id < c.num_labels, "config.json: id2label has id {} of {} labels", id,
                 c.num_labels);
      c.id2label[id] = value.get<std::string>();
    }
  }
  read(j, "num_labels", c.num_labels);
  return c;
}

nlohmann::json to_json(const GPT2Config& c) {
  return {
      {"model_type", "gpt2"},
      {"vocab_size", c.vocab_size},
      {"n_positions", c.n_positions},
      {"n_ctx", c.n_positions},
      {"n_embd", c.n_embd},
      {"n_layer", c.n_layer},
      {"n_head", c.n_head},
      {"n_inner", c.n_inner > 0 ? nlohmann::json(c.n_inner) : nlohmann::json(nullptr)},
      {"activation_function", c.activation_function},
      {"resid_pdrop", c.resid_pdrop},
      {"embd_pdrop", c.embd_pdrop},
      {"attn_pdrop", c.attn_pdrop},
      {"layer_norm_epsilon", c.layer_norm_epsilon},
      {"initializer_range", c.initializer_range},
      {"bos_token_id", c.bos_token_id},
      {"eos_token_id", c.eos_token_id},
      {"scale_attn_weights", true},
      {"tie_word_embeddings", true},
  };
}

GPT2Config gpt2_config_from_json(const nlohmann::json& j) {
  GPT2Config c;
  read(j, "vocab_size", c.vocab_size);
  read(j, "n_positions", c.n_positions);
  read(j, "n_embd", c.n_embd);
  read(j, "n_layer", c.n_layer);
  read(j, "n_head", c.n_head);
  read(j, "n_inner", c.n_inner);
  read(j, "activation_function", c.activation_function);
  read(j, "resid_pdrop", c.resid_pdrop);
  read(j, "embd_pdrop", c.embd_pdrop);
  read(j, "attn_pdrop", c.attn_pdrop);
  read(j, "layer_norm_epsilon", c.layer_norm_epsilon);
  read(j, "initializer_range", c.initializer_range);
  read(j, "bos_token_id", c.bos_token_id);
  read(j, "eos_token_id", c.eos_token_id);
  return c;
}

nlohmann::json to_json(const BartConfig& c) {
  return {
      {"model_type", "bart"},
      {"vocab_size", c.vocab_size},
      {"max_position_embeddings", c.max_position_embeddings},
      {"d_model", c.d_model},
      {"encoder_layers", c.encoder_layers},
      {"decoder_layers", c.decoder_layers},
      {"encoder_attention_heads", c.encoder_attention_heads},
      {"decoder_attention_heads", c.decoder_attention_heads},
      {"encoder_ffn_dim", c.encoder_ffn_dim},
      {"decoder_ffn_dim", c.decoder_ffn_dim},
      {"activation_function", c.activation_function},
      {"dropout", c.dropout},
      {"attention_dropout", c.attention_dropout},
      {"activation_dropout", c.activation_dropout},
      {"init_std", c.init_std},
      {"scale_embedding", c.scale_embedding},
      {"pad_token_id", c.pad_token_id},
      {"bos_token_id", c.bos_token_id},
      {"eos_token_id", c.eos_token_id},
      {"decoder_start_token_id", c.decoder_start_token_id},
      {"forced_eos_token_id", c.eos_token_id},
      {"is_encoder_decoder", true},
      {"tie_word_embeddings", true},
  };
}

BartConfig bart_config_from_json(const nlohmann::json& j) {
  BartConfig c;
  read(j, "vocab_size", c.vocab_size);
  read(j, "max_position_embeddings", c.max_position_embeddings);
  read(j, "d_model", c.d_model);
  read(j, "encoder_layers", c.encoder_layers);
  read(j, "decoder_layers", c.decoder_layers);
  read(j, "encoder_attention_heads", c.encoder_attention_heads);
  read(j, "decoder_attention_heads", c.decoder_attention_heads);
  read(j, "encoder_ffn_dim", c.encoder_ffn_dim);
  read(j, "decoder_ffn_dim", c.decoder_ffn_dim);
  read(j, "activation_function", c.activation_function);
  read(j, "dropout", c.dropout);
  read(j, "attention_dropout", c.attention_dropout);
  read(j, "activation_dropout", c.activation_dropout);
  read(j, "init_std", c.init_std);
  read(j, "scale_embedding", c.scale_embedding);
  read(j, "pad_token_id", c.pad_token_id);
  read(j, "bos_token_id", c.bos_token_id);
  read(j, "eos_token_id", c.eos_token_id);
  read(j, "decoder_start_token_id", c.decoder_start_token_id);
  return c;
}

}  // namespace heed::nn
