#pragma once
// What every model family shares for checkpoints: its Hugging Face identity (model_type,
// architecture, config fields) and how checkpoint names map onto its parameters.
#include <nlohmann/json.hpp>

#include <memory>
#include <string>

#include "autograd/generator.h"
#include "nn/models/model_io.h"
#include "nn/module.h"

namespace heed::nn {

class PretrainedModel : public Module {
 public:
  virtual ModelOutputs forward(const ModelInputs& inputs) const = 0;
  virtual std::string model_type() const = 0;    // config.json's model_type, e.g. "bert"
  virtual std::string architecture() const = 0;  // e.g. "BertForMaskedLM"
  virtual nlohmann::json config_json() const = 0;
  // The prefix that checkpoints may leave off (`bert.`, `transformer.`); empty if none.
  virtual std::string base_prefix() const { return ""; }
  // Checkpoint names that carry nothing to load: tied copies and fixed buffers.
  virtual bool ignores_checkpoint_name(const std::string& name) const;
  // Checkpoint names that are old spellings of this model's names (`LayerNorm.gamma`).
  virtual std::string canonical_checkpoint_name(const std::string& name) const;

  // The generator that every dropout of the model draws from: its state is part of a
  // training checkpoint.
  std::shared_ptr<Generator> dropout_generator;
};

}  // namespace heed::nn
