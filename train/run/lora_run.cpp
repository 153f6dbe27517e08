#include "train/run/lora_run.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "nn/lora_files.h"
#include "train/config/config_origins.h"

namespace heed::train {
namespace {

namespace fs = std::filesystem;

// The seed of the adapters' A matrices: the run's, apart from the model's own initialisation.
constexpr uint64_t kLoraSeedOffset = 0x4c6f5241;  // "LoRA"

std::string module_of(const std::string& parameter) {
  return parameter.substr(0, parameter.rfind('.'));
}

}  // namespace

nn::LoraSpec lora_spec(const LoraConfig& c) {
  return {.options = {.r = c.r, .alpha = c.lora_alpha, .dropout = c.lora_dropout},
          .target_modules = c.target_modules.value_or(std::vector<std::string>{}),
          .modules_to_save = c.modules_to_save.value_or(std::vector<std::string>{})};
}

std::vector<std::string> merge_init_from_adapter(const RunConfig& c, nn::PretrainedModel& model,
                                                 const Log& log) {
  if (!c.init_from || !fs::is_regular_file(fs::path(*c.init_from) / "adapter_config.json")) {
    return {};
  }
  // A's draw does not matter: the adapter's file sets it.
  Generator unused(0);
  const std::vector<std::string> loaded = nn::apply_adapter(model, *c.init_from, unused);
  nn::merge_lora(model);
  for (auto [name, p] : model.named_parameters()) p.set_requires_grad(true);  // all train again
  log(
      fmt::format("init_from {} holds a LoRA adapter (adapter_config.json): merged into the "
                  "weights, as infer applies it",
                  *c.init_from));
  return loaded;
}

void set_up_lora(const RunConfig& c, nn::PretrainedModel& model,
                 const std::vector<std::string>& fresh, const Log& log) {
  if (!c.lora.enabled()) return;
  const nn::LoraSpec spec = lora_spec(c.lora);
  Generator init(static_cast<uint64_t>(c.train.seed) + kLoraSeedOffset);
  std::vector<std::string> adapted;
  try {
    adapted = nn::attach_lora(model, spec, init);
  } catch (const Error& e) {
    const std::string message = e.what();
    config_fail(
        c.origins.where(message.starts_with("lora.modules_to_save") ? "lora.modules_to_save"
                                                                    : "lora.target_modules"),
        "{}", message);
  }
  std::map<std::string, bool> trains;  // parameter name -> requires a gradient
  for (const auto& [name, t] : model.named_parameters()) trains[name] = t.requires_grad();
  std::vector<std::string> left_frozen;
  for (const std::string& name : fresh) {
    const auto it = trains.find(name);
    if (it == trains.end() || it->second) continue;  // a buffer, or trained whole
    const std::string module = module_of(name);
    if (std::ranges::count(adapted, module) == 0 && std::ranges::count(left_frozen, module) == 0) {
      left_frozen.push_back(module);
    }
  }
  if (!left_frozen.empty()) {
    config_fail(c.origins.where("lora.modules_to_save"),
                "lora: {} {} not in init_from {} and would stay frozen at {} random "
                "initialisation; add {} to lora.modules_to_save",
                fmt::join(left_frozen, ", "), left_frozen.size() == 1 ? "is" : "are", *c.init_from,
                left_frozen.size() == 1 ? "its" : "their", left_frozen.size() == 1 ? "it" : "them");
  }
  int64_t trainable = 0, all = model.num_parameters();
  for (const auto& [name, t] : nn::trainable_parameters(model)) trainable += t.numel();
  for (const auto& [name, t] : nn::adapter_parameters(model)) all += t.numel();
  log(fmt::format(
      "lora: r {}, lora_alpha {}, {} adapters ({}); modules_to_save [{}]; trainable {} of {} "
      "parameters ({:.2f}%)",
      spec.options.r, spec.options.alpha, adapted.size(), fmt::join(spec.target_modules, ", "),
      fmt::join(spec.modules_to_save, ", "), trainable, all, 100.0 * trainable / all));
}

void save_lora_files(const RunConfig& c, const nn::PretrainedModel& model, const std::string& dir) {
  if (!c.lora.enabled()) return;
  nn::save_adapter(model, lora_spec(c.lora), c.init_from.value_or(""), dir);
}

void load_lora_weights(const RunConfig& c, nn::PretrainedModel& model, const std::string& dir) {
  if (c.lora.enabled()) nn::load_adapter_weights(model, dir);
}

}  // namespace heed::train
