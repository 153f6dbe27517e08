#pragma once
// A few masked-LM predictions on held-out text, as the end of a pretraining run shows them.
#include <string>

#include "data/datasets.h"
#include "data/text_tokenizer.h"
#include "data/wordpiece.h"
#include "nn/models/pretrained.h"

namespace heed::train {

// For `examples` windows of `split`, masks one word's first piece near the middle and lists the
// model's top-k tokens with their probabilities. Runs in eval mode; no gradients.
std::string mlm_prediction_examples(const nn::PretrainedModel& model,
                                    const data::TextTokenizer& tokenizer,
                                    const data::Dataset& split, int examples, int top_k);

// For `examples` windows of `split`, the first `prompt_tokens` tokens as a prompt and a
// sampled continuation of `new_tokens` (seeded: the same text on every run).
std::string gpt_sample_examples(const nn::PretrainedModel& model,
                                const data::TextTokenizer& tokenizer, const data::Dataset& split,
                                int examples, int prompt_tokens, int new_tokens, uint64_t seed);

}  // namespace heed::train
