#pragma once
// LoRA's part in a run (the `lora` section; nn/lora.h holds the adapters): attaching them after
// init_from has loaded, refusing a new module that would stay frozen at its random
// initialisation, and PEFT's adapter files in each checkpoint beside the plain model directory.
#include <string>
#include <vector>

#include "nn/lora.h"
#include "train/config/config.h"
#include "train/tasks/task_data.h"

namespace heed::train {

nn::LoraSpec lora_spec(const LoraConfig& config);

// When init_from is a LoRA run's checkpoint (it holds adapter_config.json), its adapter merged
// into `model`, which holds init_from's weights: the run starts from the fine-tuned model, as
// `infer` would run it. Returns the parameters the adapter loaded (its modules_to_save).
std::vector<std::string> merge_init_from_adapter(const RunConfig& config,
                                                 nn::PretrainedModel& model, const Log& log);

// With config.lora on: adapts and freezes `model`, whose parameters `fresh` init_from lacked;
// each of those must lie in a module of lora.modules_to_save or an adapted one, else a
// ConfigError names the module. Logs the adapters and the trainable share.
void set_up_lora(const RunConfig& config, nn::PretrainedModel& model,
                 const std::vector<std::string>& fresh, const Log& log);

// With config.lora on, into checkpoint directory `dir`: adapter_config.json (its
// base_model_name_or_path is init_from) and adapter_model.safetensors.
void save_lora_files(const RunConfig& config, const nn::PretrainedModel& model,
                     const std::string& dir);

// With config.lora on, the adapters' weights of checkpoint `dir` (the model's own come from its
// model.safetensors).
void load_lora_weights(const RunConfig& config, nn::PretrainedModel& model, const std::string& dir);

}  // namespace heed::train
