#pragma once
// Model configs to and from Hugging Face config.json. Readers take the fields heed uses,
// keep the defaults for absent ones, and ignore the many fields that do not affect the
// architecture (so a config written by transformers loads).
#include <nlohmann/json.hpp>

#include "nn/models/bert.h"
#include "nn/models/distilbert.h"
#include "nn/models/encoder_decoder.h"
#include "nn/models/gpt.h"
#include "nn/models/roberta.h"
#include "nn/models/t5.h"

namespace heed::nn {

nlohmann::json to_json(const BertConfig& c);
nlohmann::json to_json(const GPT2Config& c);
nlohmann::json to_json(const BartConfig& c);
// DistilBERT's own field names, model_type "distilbert", its tied projector, the labels.
nlohmann::json to_json(const DistilBertConfig& c);
BertConfig bert_config_from_json(const nlohmann::json& j);
// RoBERTa's fields are BERT's (to_json(BertConfig) writes them); absent ones take its defaults.
RobertaConfig roberta_config_from_json(const nlohmann::json& j);
DistilBertConfig distilbert_config_from_json(const nlohmann::json& j);
GPT2Config gpt2_config_from_json(const nlohmann::json& j);
BartConfig bart_config_from_json(const nlohmann::json& j);
// T5's fields, num_decoder_layers resolved, model_type "t5" and the activation Hugging Face
// derives from feed_forward_proj.
nlohmann::json to_json(const T5Config& c);
T5Config t5_config_from_json(const nlohmann::json& j);

}  // namespace heed::nn
