#include "nn/lora.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <functional>

#include "autograd/grad_mode.h"
#include "autograd/ops.h"

namespace heed::nn {
namespace {

// Calls fn(path, module) for `m` and every module under it, each once (a shared module under
// its first path). A child registered under an empty name shares its parent's path.
void for_each_module(const std::string& path, Module& m, std::vector<const Module*>& seen,
                     const std::function<void(const std::string&, Module&)>& fn) {
  if (std::find(seen.begin(), seen.end(), &m) != seen.end()) return;
  seen.push_back(&m);
  fn(path, m);
  for (const auto& [name, child] : m.named_children()) {
    const std::string child_path = name.empty() ? path : path.empty() ? name : path + "." + name;
    for_each_module(child_path, *child, seen, fn);
  }
}

void for_each_module(const Module& m, const std::function<void(const std::string&, Module&)>& fn) {
  std::vector<const Module*> seen;
  // The walk only reads the tree; the callers that change a module own the model non-const.
  for_each_module("", const_cast<Module&>(m), seen, fn);
}

// The dotted module path of a parameter name (`classifier.weight` -> `classifier`).
std::string module_of(const std::string& parameter) {
  const size_t dot = parameter.rfind('.');
  return dot == std::string::npos ? "" : parameter.substr(0, dot);
}

// Whether `parameter` lies in a module that one of `keys` names: its module or an ancestor.
bool in_named_module(const std::string& parameter, const std::vector<std::string>& keys) {
  for (std::string path = module_of(parameter); !path.empty(); path = module_of(path)) {
    if (module_matches_any(path, keys)) return true;
  }
  return false;
}

}  // namespace

bool module_matches(const std::string& path, const std::string& key) {
  return path == key || (path.size() > key.size() && path.ends_with(key) &&
                         path[path.size() - key.size() - 1] == '.');
}

bool module_matches_any(const std::string& path, const std::vector<std::string>& keys) {
  return std::ranges::any_of(keys,
                             [&](const std::string& key) { return module_matches(path, key); });
}

std::vector<std::pair<std::string, Linear*>> named_linears(const Module& model) {
  std::vector<std::pair<std::string, Linear*>> out;
  for_each_module(model, [&](const std::string& path, Module& m) {
    if (auto* linear = dynamic_cast<Linear*>(&m)) out.emplace_back(path, linear);
  });
  return out;
}

std::vector<std::string> attach_lora(PretrainedModel& model, const LoraSpec& spec,
                                     Generator& init) {
  const auto linears = named_linears(model);
  for (const std::string& key : spec.target_modules) {
    const bool found = std::ranges::any_of(
        linears, [&](const auto& named) { return module_matches(named.first, key); });
    HEED_CHECK(found,
               "lora.target_modules: '{}' names no Linear module of {} (its Linears end in: {})",
               key, model.architecture(), [&] {
                 std::vector<std::string> last;
                 for (const auto& [path, l] : linears) {
                   const std::string name = path.substr(path.rfind('.') + 1);
                   if (std::ranges::find(last, name) == last.end()) last.push_back(name);
                 }
                 return fmt::format("{}", fmt::join(last, ", "));
               }());
  }
  // Hugging Face's modules, as named: a module registered as `pooler.dense` makes `pooler` one
  // too, so every dotted ancestor of a parameter counts.
  const NamedTensors parameters = model.named_parameters();
  for (const std::string& key : spec.modules_to_save) {
    const bool found = std::ranges::any_of(
        parameters, [&](const auto& named) { return in_named_module(named.first, {key}); });
    HEED_CHECK(found, "lora.modules_to_save: '{}' names no module of {}", key,
               model.architecture());
  }
  for (auto [name, p] : parameters) {
    if (!in_named_module(name, spec.modules_to_save)) p.set_requires_grad(false);
  }
  std::vector<std::string> adapted;
  for (const auto& [path, linear] : linears) {
    if (!module_matches_any(path, spec.target_modules)) continue;
    HEED_CHECK(!linear->lora, "lora: {} already has an adapter", path);
    HEED_CHECK(!in_named_module(path + ".weight", spec.modules_to_save),
               "lora: {} is both adapted (target_modules) and trained whole (modules_to_save)",
               path);
    linear->lora =
        std::make_shared<LoraAdapter>(linear->in_features, linear->out_features, spec.options, init,
                                      linear->weight.dtype(), model.dropout_generator);
    adapted.push_back(path);
  }
  return adapted;
}

NamedTensors adapter_parameters(const Module& model) {
  NamedTensors out;
  for (const auto& [path, linear] : named_linears(model)) {
    if (!linear->lora) continue;
    for (auto& [name, t] : linear->lora->named_parameters()) out.emplace_back(path + "." + name, t);
  }
  return out;
}

NamedTensors trainable_parameters(const Module& model) {
  NamedTensors out;
  for (auto& named : model.named_parameters()) {
    if (named.second.requires_grad()) out.push_back(named);
  }
  for (auto& named : adapter_parameters(model)) out.push_back(named);
  return out;
}

NamedTensors saved_module_parameters(const Module& model,
                                     const std::vector<std::string>& modules_to_save) {
  NamedTensors out;
  for (auto& named : model.named_parameters()) {
    if (in_named_module(named.first, modules_to_save)) out.push_back(named);
  }
  return out;
}

void merge_lora(Module& model) {
  NoGradGuard no_grad;
  for (const auto& [path, linear] : named_linears(model)) {
    if (!linear->lora) continue;
    Tensor delta = linear->lora->merged_delta();  // [out, in]
    if (linear->layout == WeightLayout::in_out) delta = transpose(delta, 0, 1).contiguous();
    linear->weight.copy_(add(linear->weight, delta));
    linear->lora.reset();
  }
}

}  // namespace heed::nn
