#pragma once
// Hugging Face-compatible model directories: config.json + model.safetensors, with the
// checkpoint's names and layouts, loadable by transformers' from_pretrained and back.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "io/safetensors.h"
#include "nn/models/pretrained.h"

namespace heed::nn {

struct LoadOptions {
  // Strict: every model tensor must be in the checkpoint and every checkpoint tensor must
  // be used. Non-strict (initialising a new head on a pretrained body): missing tensors keep
  // their initialisation and unused ones are reported. A shape mismatch is always an error.
  bool strict = true;
  // Which checkpoint names to consider (all if empty).
  std::function<bool(const std::string&)> filter;
};

struct LoadReport {
  std::vector<std::string> loaded, missing, unexpected;
};

// Copies the checkpoint's tensors into the model's parameters and buffers. Names may carry
// the model's base prefix or not (`bert.encoder...` or `encoder...`).
LoadReport load_weights(PretrainedModel& model, const io::SafetensorsFile& file,
                        const LoadOptions& options = {});

// Writes `dir`/config.json and `dir`/model.safetensors (creating `dir`).
void save_pretrained(const PretrainedModel& model, const std::string& dir);

// The config.json of a model directory, parsed.
nlohmann::json read_model_config(const std::string& dir);

// The Hugging Face architecture config.json names: its first "architectures" entry, else the
// one heed builds for its model_type.
std::string declared_architecture(const nlohmann::json& config);

// Builds the model of that architecture, with random weights, seeded.
std::shared_ptr<PretrainedModel> model_from_config(const nlohmann::json& config, uint64_t seed,
                                                   DType dtype = DType::f32);

// model_from_config + strict load_weights of `dir`/model.safetensors.
std::shared_ptr<PretrainedModel> from_pretrained(const std::string& dir, DType dtype = DType::f32);

}  // namespace heed::nn
