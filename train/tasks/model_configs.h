#pragma once
// The Hugging Face config of each architecture as a run fills it in: model.* from the YAML,
// and what the config leaves unset (vocab size, special token ids, the number of labels) from
// the tokenizer and the data. The tasks build their models from these.
#include <cstdint>
#include <memory>

#include "nn/models/bert.h"
#include "nn/models/distilbert.h"
#include "nn/models/encoder_decoder.h"
#include "nn/models/gpt.h"
#include "nn/models/roberta.h"
#include "train/config/config.h"
#include "train/tasks/task_data.h"

namespace heed::train {

// model.*'s fields for an encoder of BERT's layout (bert, roberta or distilbert) as the config
// gives them, in BERT's names.
nn::BertConfig encoder_config_fields(const ModelConfig& model);
// The BERT-layout config of model.arch bert, roberta or distilbert (RoBERTa's fields are BERT's;
// DistilBERT's converted: DistilBertConfig::encoder_config).
nn::BertConfig bert_config(const RunConfig& config, const TaskData& data);
// The same with a classification head over data.labels.
nn::BertConfig bert_classifier_config(const RunConfig& config, const TaskData& data);
// DistilBERT's own config for model.arch distilbert, and with a classification head.
nn::DistilBertConfig distilbert_config(const RunConfig& config, const TaskData& data);
nn::DistilBertConfig distilbert_classifier_config(const RunConfig& config, const TaskData& data);
// The encoder models of model.arch (bert, roberta or distilbert) with their heads, seeded by
// train.seed.
std::shared_ptr<nn::PretrainedModel> make_masked_lm(const RunConfig& config, const TaskData& data);
std::shared_ptr<nn::PretrainedModel> make_sequence_classifier(const RunConfig& config,
                                                              const TaskData& data);
std::shared_ptr<nn::PretrainedModel> make_token_classifier(const RunConfig& config,
                                                           const TaskData& data);
nn::GPT2Config gpt2_config(const RunConfig& config, const TaskData& data);
// The first decoder input of an encoder-decoder: model.decoder_start_token_id, else the pad
// token for T5 (as Hugging Face's T5 models) and the tokenizer's start token for BART. The
// collators and the model's config take it from here, so training and decoding agree.
int32_t decoder_start_id(const RunConfig& config, const data::TextTokenizer& tokenizer);
nn::BartConfig bart_config(const RunConfig& config, const TaskData& data);
// T5's ids from the tokenizer as BART's: pad, eos (its end), decoder start (its start; for
// Hugging Face's T5 tokenizer that is the pad id).
nn::T5Config t5_config(const RunConfig& config, const TaskData& data);

}  // namespace heed::train
