#pragma once
// LoRA on a model, as PEFT does it: adapters on the Linears that `target_modules` names, every
// other parameter frozen but those of the `modules_to_save`, which train whole. A key names a
// module as PEFT matches it: the module's dotted path equals the key or ends with "." + key
// (`query` matches `bert.encoder.layer.0.attention.self.query`).
#include <string>
#include <utility>
#include <vector>

#include "autograd/generator.h"
#include "nn/linear.h"
#include "nn/models/pretrained.h"

namespace heed::nn {

struct LoraSpec {
  LoraOptions options;
  std::vector<std::string> target_modules;
  std::vector<std::string> modules_to_save;
};

// PEFT's match of a module path against one key of target_modules or modules_to_save.
bool module_matches(const std::string& path, const std::string& key);
bool module_matches_any(const std::string& path, const std::vector<std::string>& keys);

// Every Linear of `model` with its dotted module path, in registration order, each once.
std::vector<std::pair<std::string, Linear*>> named_linears(const Module& model);

// Attaches an adapter to each Linear that spec.target_modules names (A drawn from `init`,
// dropout from the model's generator) and freezes every parameter of the model that is not in
// a module of spec.modules_to_save. A key that matches no Linear (target_modules) or no module
// (modules_to_save) throws, naming it. Returns the adapted modules' paths.
std::vector<std::string> attach_lora(PretrainedModel& model, const LoraSpec& spec, Generator& init);

// The adapters' parameters under PEFT's names without its prefix:
// `<module path>.lora_A.weight` and `.lora_B.weight`.
NamedTensors adapter_parameters(const Module& model);

// What an optimizer steps: the model's parameters that require a gradient, then the adapters'.
NamedTensors trainable_parameters(const Module& model);

// The model's parameters that belong to a module of `modules_to_save`.
NamedTensors saved_module_parameters(const Module& model,
                                     const std::vector<std::string>& modules_to_save);

// W <- W + (lora_alpha / r) B A on each adapted Linear (transposed for an [in, out] weight), then
// removes the adapters: the model is a plain one that computes the same function.
void merge_lora(Module& model);

}  // namespace heed::nn
