#pragma once
// LoRA adapters in `infer`: a checkpoint with PEFT's adapter applied (--adapter, or the
// adapter_config.json a LoRA run writes into its checkpoints), and `infer merge`.
#include <nlohmann/json.hpp>

#include <memory>
#include <string>

#include "nn/models/pretrained.h"
#include "programs/infer_commands.h"

namespace heed::infer {

// The adapter to apply: --adapter, else the checkpoint itself when it holds adapter_config.json;
// empty: none.
std::string adapter_directory(const CommonArgs& args);

// The directory whose config.json says what model to build: the adapter's when it has one (a
// heed run's checkpoint, whose head may differ from the base's), else the checkpoint's.
std::string model_config_directory(const CommonArgs& args);

// The model of `config` with the checkpoint's weights and the adapter applied. Each parameter
// the checkpoint lacks must come from the adapter (its modules_to_save), else this throws,
// naming it.
std::shared_ptr<nn::PretrainedModel> with_adapter(const CommonArgs& args,
                                                  const nlohmann::json& config);

}  // namespace heed::infer
