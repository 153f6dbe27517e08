#include "nn/lora_files.h"

#include <filesystem>
#include <map>
#include <optional>

#include "autograd/grad_mode.h"
#include "io/json_file.h"
#include "io/safetensors.h"

namespace heed::nn {
namespace {

namespace fs = std::filesystem;

constexpr const char* kConfigFile = "adapter_config.json";
constexpr const char* kWeightsFile = "adapter_model.safetensors";
constexpr const char* kPrefix = "base_model.model.";  // PeftModel's path to the base model

bool uses_conv1d_layout(const PretrainedModel& model) {
  for (const auto& [path, linear] : named_linears(model)) {
    if (linear->lora) return linear->layout == WeightLayout::in_out;
  }
  return false;
}

nlohmann::json number_as_peft_writes(double x) {
  if (x == static_cast<double>(static_cast<int64_t>(x))) return static_cast<int64_t>(x);
  return x;
}

std::vector<std::string> string_list(const nlohmann::json& value, const std::string& where,
                                     const std::string& field) {
  std::vector<std::string> out;
  HEED_CHECK(value.is_array(), "{}: {} must be a list of module names, got {}", where, field,
             value.dump());
  for (const nlohmann::json& item : value) {
    HEED_CHECK(item.is_string(), "{}: {} must be a list of module names, got {}", where, field,
               item.dump());
    out.push_back(item.get<std::string>());
  }
  return out;
}

double number_field(const nlohmann::json& config, const std::string& where, const char* field,
                    double fallback) {
  const auto it = config.find(field);
  if (it == config.end() || it->is_null()) return fallback;
  HEED_CHECK(it->is_number(), "{}: {} must be a number, got {}", where, field, it->dump());
  return it->get<double>();
}

// A field heed does not apply must keep PEFT's default: `off` tells whether its value does.
void check_default(const nlohmann::json& config, const std::string& where, const char* field,
                   bool (*off)(const nlohmann::json&), const char* what) {
  const auto it = config.find(field);
  HEED_CHECK(it == config.end() || it->is_null() || off(*it), "{}: {} {} is not supported ({})",
             where, field, it == config.end() ? "" : it->dump(), what);
}

}  // namespace

nlohmann::json peft_task_type(const std::string& architecture) {
  if (architecture.ends_with("ForSequenceClassification")) return "SEQ_CLS";
  if (architecture.ends_with("ForTokenClassification")) return "TOKEN_CLS";
  if (architecture == "GPT2LMHeadModel") return "CAUSAL_LM";
  if (architecture.ends_with("ForConditionalGeneration")) return "SEQ_2_SEQ_LM";
  return nullptr;
}

nlohmann::json adapter_config_json(const PretrainedModel& model, const LoraSpec& spec,
                                   const std::string& base_model_name_or_path) {
  nlohmann::json modules_to_save = nullptr;
  if (!spec.modules_to_save.empty()) modules_to_save = spec.modules_to_save;
  return {{"peft_type", "LORA"},
          {"task_type", peft_task_type(model.architecture())},
          {"base_model_name_or_path", base_model_name_or_path},
          {"r", spec.options.r},
          {"lora_alpha", number_as_peft_writes(spec.options.alpha)},
          {"lora_dropout", spec.options.dropout},
          {"target_modules", spec.target_modules},
          {"modules_to_save", modules_to_save},
          {"bias", "none"},
          {"fan_in_fan_out", uses_conv1d_layout(model)},
          {"init_lora_weights", true},
          {"use_rslora", false},
          {"use_dora", false},
          {"inference_mode", true}};
}

void save_adapter(const PretrainedModel& model, const LoraSpec& spec,
                  const std::string& base_model_name_or_path, const std::string& dir) {
  io::write_json_file((fs::path(dir) / kConfigFile).string(),
                      adapter_config_json(model, spec, base_model_name_or_path));
  NamedTensors tensors;
  for (auto& [name, t] : adapter_parameters(model)) tensors.emplace_back(kPrefix + name, t);
  for (auto& [name, t] : saved_module_parameters(model, spec.modules_to_save)) {
    tensors.emplace_back(kPrefix + name, t);
  }
  io::save_safetensors((fs::path(dir) / kWeightsFile).string(), tensors, {{"format", "pt"}});
}

LoraSpec read_adapter_config(const std::string& dir) {
  const std::string where = (fs::path(dir) / kConfigFile).string();
  HEED_CHECK(fs::exists(where), "{}: cannot open (is '{}' an adapter directory?)", where, dir);
  const nlohmann::json config = io::read_json_file(where);
  HEED_CHECK(config.is_object(), "{}: expected a JSON object, not {}", where, config.type_name());
  const std::string type = config.value("peft_type", "");
  HEED_CHECK(type == "LORA", "{}: peft_type is '{}'; heed applies LORA adapters", where, type);
  LoraSpec spec;
  const auto r = config.find("r");
  HEED_CHECK(r != config.end() && r->is_number_integer() && r->get<int64_t>() > 0,
             "{}: r must be a positive integer", where);
  spec.options.r = r->get<int64_t>();
  spec.options.alpha = number_field(config, where, "lora_alpha", 8);
  spec.options.dropout = number_field(config, where, "lora_dropout", 0);
  const auto targets = config.find("target_modules");
  HEED_CHECK(targets != config.end() && !targets->is_null(), "{}: target_modules is missing",
             where);
  HEED_CHECK(!targets->is_string(),
             "{}: target_modules {} is a regular expression; heed takes a list of module names",
             where, targets->dump());
  spec.target_modules = string_list(*targets, where, "target_modules");
  if (const auto saved = config.find("modules_to_save");
      saved != config.end() && !saved->is_null()) {
    spec.modules_to_save = string_list(*saved, where, "modules_to_save");
  }
  const std::string bias = config.value("bias", "none");
  HEED_CHECK(bias == "none", "{}: bias '{}' is not supported (heed applies bias \"none\")", where,
             bias);
  const auto is_false = [](const nlohmann::json& v) { return v.is_boolean() && !v.get<bool>(); };
  const auto is_empty = [](const nlohmann::json& v) { return v.empty(); };
  check_default(config, where, "use_rslora", is_false, "scaling lora_alpha / sqrt(r)");
  check_default(config, where, "use_dora", is_false, "DoRA");
  check_default(config, where, "rank_pattern", is_empty, "a rank per module");
  check_default(config, where, "alpha_pattern", is_empty, "an alpha per module");
  check_default(config, where, "layers_to_transform", is_empty, "some layers only");
  return spec;
}

std::string adapter_base_model(const std::string& dir) {
  const nlohmann::json config = io::read_json_file((fs::path(dir) / kConfigFile).string());
  const auto it = config.find("base_model_name_or_path");
  return it != config.end() && it->is_string() ? it->get<std::string>() : "";
}

std::vector<std::string> load_adapter_weights(PretrainedModel& model, const std::string& dir) {
  const io::SafetensorsFile file((fs::path(dir) / kWeightsFile).string());
  std::map<std::string, Tensor> adapters, parameters;
  for (auto& [name, t] : adapter_parameters(model)) adapters[name] = t;
  for (auto& [name, t] : model.named_parameters()) parameters[name] = t;
  std::vector<std::string> loaded_parameters;
  NoGradGuard no_grad;
  for (const std::string& raw : file.names()) {
    const std::string name =
        raw.starts_with(kPrefix) ? raw.substr(std::string(kPrefix).size()) : raw;
    // A Tensor is a shared handle: copying it keeps the storage that copy_ writes into alive
    // after the adapter's map entry is erased.
    std::optional<Tensor> target;
    if (auto it = adapters.find(name); it != adapters.end()) {
      target = it->second;
      adapters.erase(it);
    } else if (auto p = parameters.find(name); p != parameters.end()) {
      target = p->second;
      loaded_parameters.push_back(name);
    }
    HEED_CHECK(target.has_value(),
               "{}: tensor '{}' fits no adapter and no parameter of {} (adapter_config.json's "
               "target_modules and modules_to_save name what it adapts)",
               file.path(), raw, model.architecture());
    const io::SafetensorsTensorInfo& info = file.info(raw);
    HEED_CHECK(info.shape == target->shape(), "{}: '{}' has shape {}, but {} needs {}", file.path(),
               raw, shape_str(info.shape), model.architecture(), target->shape_str());
    target->copy_(file.get(raw));
  }
  HEED_CHECK(adapters.empty(), "{}: no tensor for the adapter '{}{}'", file.path(), kPrefix,
             adapters.empty() ? "" : adapters.begin()->first);
  return loaded_parameters;
}

std::vector<std::string> apply_adapter(PretrainedModel& model, const std::string& dir,
                                       Generator& init) {
  const LoraSpec spec = read_adapter_config(dir);
  try {
    attach_lora(model, spec, init);
  } catch (const Error& e) {
    fail("{}: {}", (fs::path(dir) / kConfigFile).string(), e.what());
  }
  return load_adapter_weights(model, dir);
}

}  // namespace heed::nn
