#pragma once
// PEFT's adapter directory (REFERENCE.md 15): adapter_config.json and adapter_model.safetensors,
// whose tensors are `base_model.model.<module path>.lora_A.weight` / `.lora_B.weight` and, for
// the modules_to_save, `base_model.model.<parameter name>`. heed writes what PEFT's
// save_pretrained writes and reads what it reads, for LoRA with bias "none".
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "nn/lora.h"

namespace heed::nn {

// PEFT's task_type for a Hugging Face architecture (SEQ_CLS, TOKEN_CLS, CAUSAL_LM, SEQ_2_SEQ_LM;
// null for a masked LM, which PEFT has no task type for).
nlohmann::json peft_task_type(const std::string& architecture);

// adapter_config.json's contents for `model` adapted by `spec`.
nlohmann::json adapter_config_json(const PretrainedModel& model, const LoraSpec& spec,
                                   const std::string& base_model_name_or_path);

// Writes `dir`/adapter_config.json and `dir`/adapter_model.safetensors (`dir` must exist).
void save_adapter(const PretrainedModel& model, const LoraSpec& spec,
                  const std::string& base_model_name_or_path, const std::string& dir);

// `dir`/adapter_config.json read as a LoRA spec; what heed cannot apply as PEFT would (another
// peft_type, a bias other than none, a regular expression for target_modules, rsLoRA, DoRA, a
// rank or alpha per module) throws, naming the file and the field.
LoraSpec read_adapter_config(const std::string& dir);
// Its base_model_name_or_path (empty when absent or null).
std::string adapter_base_model(const std::string& dir);

// Copies `dir`/adapter_model.safetensors into the adapters `model` already has and into its
// modules_to_save parameters. Every adapter must find its two tensors; a tensor that fits
// nothing throws. Returns the model parameters it loaded (the modules_to_save ones).
std::vector<std::string> load_adapter_weights(PretrainedModel& model, const std::string& dir);

// read_adapter_config + attach_lora + load_adapter_weights.
std::vector<std::string> apply_adapter(PretrainedModel& model, const std::string& dir,
                                       Generator& init);

}  // namespace heed::nn
