#include "nn/models/config_json.h"

#include <charconv>
#include <type_traits>
#include <utility>

#include "io/json_fields.h"

namespace heed::nn {
namespace {

// Writes each field of a config under its Hugging Face name (nullopt as null).
struct JsonWriter {
  nlohmann::json& j;
  template <typename T>
  void field(const char* name, const T& value, const Field& f) {
    if (f.written_to_json) j[name] = value;
  }
  template <typename T>
  void field(const char* name, const std::optional<T>& value, const Field& f) {
    if (f.written_to_json) j[name] = value ? nlohmann::json(*value) : nlohmann::json(nullptr);
  }
  void divides(const char*, int64_t, const char*, int64_t) {}
};

// Reads each field that config.json has (null: the default stays); a wrong type is an error
// naming the field.
struct JsonReader {
  const nlohmann::json& j;
  template <typename T>
  void field(const char* name, T& value, const Field&) {
    auto it = j.find(name);
    if (it == j.end() || it->is_null()) return;
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      // Not get<T>(): it truncates 64.7 to 64 and is undefined for 1e300.
      const int64_t v = io::json_to_int64(*it, "config.json", name);
      HEED_CHECK(std::in_range<T>(v), "config.json: field '{}' is out of range ({})", name, v);
      value = static_cast<T>(v);
      return;
    }
    try {
      value = it->get<T>();
    } catch (const nlohmann::json::exception& e) {
      fail("config.json: field '{}' has the wrong type ({})", name, it->type_name());
    }
  }
  template <typename T>
  void field(const char* name, std::optional<T>& value, const Field& f) {
    T read{};
    if (!j.contains(name) || j.at(name).is_null()) return;
    field(name, read, f);
    value = read;
  }
  void divides(const char*, int64_t, const char*, int64_t) {}
};

template <typename Config>
nlohmann::json fields_json(const Config& c) {
  nlohmann::json j = nlohmann::json::object();
  JsonWriter writer{j};
  Config::visit(c, writer);
  return j;
}

template <typename Config>
Config config_from_json(const nlohmann::json& j) {
  Config c;
  JsonReader reader{j};
  Config::visit(c, reader);
  return c;
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
  nlohmann::json j = fields_json(c);
  j["model_type"] = "bert";
  j["tie_word_embeddings"] = true;
  j.update(labels_json(c.id2label, c.num_labels));
  return j;
}

namespace {

// BERT's, RoBERTa's and DistilBERT's readers: the fields, then the labels.
template <typename Config>
Config encoder_config_from_json(const nlohmann::json& j) {
  Config c = config_from_json<Config>(j);
  // Hugging Face derives num_labels from id2label ({"0": "ham", "1": "spam"}); an explicit
  // num_labels wins.
  if (auto it = j.find("id2label"); it != j.end() && it->is_object()) {
    const int64_t n = static_cast<int64_t>(it->size());
    c.id2label.assign(n, "");
    std::vector<bool> seen(n, false);
    for (auto& [key, value] : it->items()) {
      int64_t id = -1;
      const auto [end, error] = std::from_chars(key.data(), key.data() + key.size(), id);
      HEED_CHECK(error == std::errc() && end == key.data() + key.size() && id >= 0 && id < n,
                 "config.json: id2label key '{}' is not a label id (0 to {})", key, n - 1);
      HEED_CHECK(value.is_string(), "config.json: id2label['{}'] must be a string, not {}", key,
                 value.type_name());
      HEED_CHECK(!seen[id], "config.json: id2label has label id {} twice ('{}')", id, key);
      seen[id] = true;
      c.id2label[id] = value.template get<std::string>();
    }
    if (!j.contains("num_labels") || j.at("num_labels").is_null()) c.num_labels = n;
  }
  return c;
}

}  // namespace

BertConfig bert_config_from_json(const nlohmann::json& j) {
  return encoder_config_from_json<BertConfig>(j);
}

RobertaConfig roberta_config_from_json(const nlohmann::json& j) {
  return encoder_config_from_json<RobertaConfig>(j);
}

nlohmann::json to_json(const DistilBertConfig& c) {
  nlohmann::json j = fields_json(c);
  j["model_type"] = "distilbert";
  // vocab_projector is tied to the word embeddings: transformers' tie_word_embeddings, and
  // DistilBertConfig's own older spelling of it.
  j["tie_weights_"] = true;
  j["tie_word_embeddings"] = true;
  j.update(labels_json(c.id2label, c.num_labels));
  return j;
}

DistilBertConfig distilbert_config_from_json(const nlohmann::json& j) {
  return encoder_config_from_json<DistilBertConfig>(j);
}

nlohmann::json to_json(const GPT2Config& c) {
  nlohmann::json j = fields_json(c);
  j["model_type"] = "gpt2";
  j["n_ctx"] = c.n_positions;
  if (c.n_inner == 0) j["n_inner"] = nullptr;  // Hugging Face's "4 * n_embd"
  j["scale_attn_weights"] = true;
  j["tie_word_embeddings"] = true;
  return j;
}

GPT2Config gpt2_config_from_json(const nlohmann::json& j) {
  return config_from_json<GPT2Config>(j);
}

nlohmann::json to_json(const BartConfig& c) {
  nlohmann::json j = fields_json(c);
  j["model_type"] = "bart";
  j["forced_eos_token_id"] = c.eos_token_id;
  j["is_encoder_decoder"] = true;
  j["tie_word_embeddings"] = true;
  return j;
}

BartConfig bart_config_from_json(const nlohmann::json& j) {
  return config_from_json<BartConfig>(j);
}

nlohmann::json to_json(const T5Config& c) {
  nlohmann::json j = fields_json(c);
  j["model_type"] = "t5";
  j["num_decoder_layers"] = c.decoder_layers();
  j["is_encoder_decoder"] = true;
  j["is_gated_act"] = c.gated();
  j["dense_act_fn"] = c.gated() ? "gelu_new" : "relu";
  return j;
}

T5Config t5_config_from_json(const nlohmann::json& j) {
  return config_from_json<T5Config>(j);
}

}  // namespace heed::nn
