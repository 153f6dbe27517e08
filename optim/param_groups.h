#pragma once
// The default parameter groups for weight decay: decay the weight matrices and embeddings,
// not the biases or the LayerNorm parameters (Hugging Face's convention).
//
// The rule: a parameter is not decayed if it has fewer than two dimensions, or if its name
// ends in "bias". In Transformers every bias, every LayerNorm weight and bias (BERT's
// `LayerNorm.weight`, GPT-2's `ln_1`/`ln_2`/`ln_f`, BART's `self_attn_layer_norm`,
// `final_layer_norm`, `layernorm_embedding`) is 1-D, while every weight matrix and embedding
// table is 2-D, so the shape finds them whatever a model names them; it is the rule of
// nanoGPT and many recent trainers. The name test adds Hugging Face's "bias" exclusion for
// biases that are not 1-D (e.g. a [1, V] logits bias).
#include <string>
#include <vector>

#include "optim/optimizer.h"

namespace heed::optim {

bool is_no_decay_parameter(const std::string& name, const Tensor& param);

// Two groups, in this order: the decayed parameters with `weight_decay`, then the others with
// weight decay 0. Either may be empty. The order of the parameters within each is kept.
std::vector<ParamGroup> weight_decay_groups(const NamedTensors& params, double weight_decay);

}  // namespace heed::optim
