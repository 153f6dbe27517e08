#include "nn/pretrained_io.h"

#include <filesystem>
#include <fstream>
#include <map>

#include <fmt/ranges.h>

#include "autograd/grad_mode.h"
#include "heed/version.h"
#include "io/json_file.h"
#include "nn/models/bert.h"
#include "nn/models/config_json.h"
#include "nn/models/distilbert.h"
#include "nn/models/encoder_decoder.h"
#include "nn/models/gpt.h"
#include "nn/models/t5.h"

namespace heed::nn {
namespace {

namespace fs = std::filesystem;

std::string join_first(const std::vector<std::string>& names, size_t n) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < n; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > n) out += fmt::format(", ... ({} in all)", names.size());
  return out;
}

}  // namespace

LoadReport load_weights(PretrainedModel& model, const io::SafetensorsFile& file,
                        const LoadOptions& options) {
  std::map<std::string, Tensor> targets;
  for (auto& [name, t] : model.named_parameters()) targets[name] = t;
  for (auto& [name, t] : model.named_buffers()) targets[name] = t;
  const std::string prefix = model.base_prefix();

  LoadReport report;
  std::map<std::string, std::string> source_of;  // model name -> checkpoint name
  for (const std::string& raw : file.names()) {
    if (options.filter && !options.filter(raw)) continue;
    if (model.ignores_checkpoint_name(raw)) continue;
    const std::string name = model.canonical_checkpoint_name(raw);
    std::string target;
    if (targets.count(name)) {
      target = name;
    } else if (!prefix.empty() && targets.count(prefix + name)) {
      target = prefix + name;
    } else if (!prefix.empty() && model.ignores_checkpoint_name(prefix + name)) {
      continue;
    } else {
      report.unexpected.push_back(raw);
      continue;
    }
    HEED_CHECK(!source_of.count(target), "{}: tensors '{}' and '{}' both map to '{}'", file.path(),
               source_of[target], raw, target);
    source_of[target] = raw;
  }
  for (auto& [name, t] : targets) {
    if (!source_of.count(name)) report.missing.push_back(name);
  }
  if (options.strict && (!report.missing.empty() || !report.unexpected.empty())) {
    fail("{}: checkpoint does not match {}: missing [{}]; unexpected [{}]", file.path(),
         model.architecture(), join_first(report.missing, 4), join_first(report.unexpected, 4));
  }
  NoGradGuard no_grad;
  for (auto& [target, raw] : source_of) {
    Tensor& dst = targets[target];
    const io::SafetensorsTensorInfo& info = file.info(raw);
    HEED_CHECK(info.shape == dst.shape(),
               "{}: parameter '{}' has shape {} in the checkpoint but {} in the model ({})",
               file.path(), target, shape_str(info.shape), dst.shape_str(), model.architecture());
    dst.copy_(file.get(raw));
    report.loaded.push_back(target);
  }
  return report;
}

void save_pretrained(const PretrainedModel& model, const std::string& dir) {
  fs::create_directories(dir);
  nlohmann::json config = model.config_json();
  config["torch_dtype"] = "float32";
  // Which heed wrote it, as transformers records transformers_version; readers ignore it.
  config["heed_version"] = heed::version();
  io::write_json_file((fs::path(dir) / "config.json").string(), config);
  NamedTensors tensors = model.named_parameters();
  for (auto& named : model.named_buffers()) tensors.push_back(named);
  io::save_safetensors((fs::path(dir) / "model.safetensors").string(), tensors, {{"format", "pt"}});
}

nlohmann::json read_model_config(const std::string& dir) {
  const fs::path path = fs::path(dir) / "config.json";
  HEED_CHECK(fs::exists(path), "{}: cannot open (is '{}' a model directory?)", path.string(), dir);
  nlohmann::json config = io::read_json_file(path.string());
  HEED_CHECK(config.is_object(), "{}: expected a JSON object of model settings, not {}",
             path.string(), config.type_name());
  return config;
}

std::string declared_architecture(const nlohmann::json& config) {
  if (auto it = config.find("architectures");
      it != config.end() && it->is_array() && !it->empty() && (*it)[0].is_string()) {
    return (*it)[0].get<std::string>();
  }
  // find, not value(), which throws nlohmann's type_error for a config that is not an object
  // or a model_type that is not a string: here either one means no model_type.
  const auto model_type = config.find("model_type");
  const std::string type =
      model_type != config.end() && model_type->is_string() ? model_type->get<std::string>() : "";
  if (type == "bert") return "BertForMaskedLM";
  if (type == "roberta") return "RobertaForMaskedLM";
  if (type == "distilbert") return "DistilBertForMaskedLM";
  if (type == "gpt2") return "GPT2LMHeadModel";
  if (type == "bart") return "BartForConditionalGeneration";
  if (type == "t5") return "T5ForConditionalGeneration";
  return type.empty() ? "model of unknown type" : type;
}

namespace {

using ModelFactory = std::shared_ptr<PretrainedModel> (*)(const nlohmann::json&, uint64_t, DType);

template <typename Model, auto read_config>
std::shared_ptr<PretrainedModel> make(const nlohmann::json& config, uint64_t seed, DType dtype) {
  return std::make_shared<Model>(read_config(config), seed, dtype);
}

// Every Hugging Face architecture heed builds.
const std::map<std::string, ModelFactory>& architectures() {
  static const std::map<std::string, ModelFactory> table{
      {"BertForMaskedLM", make<BertForMaskedLM, bert_config_from_json>},
      {"BertForSequenceClassification", make<BertForSequenceClassification, bert_config_from_json>},
      {"BertForTokenClassification", make<BertForTokenClassification, bert_config_from_json>},
      {"RobertaForMaskedLM", make<RobertaForMaskedLM, roberta_config_from_json>},
      {"RobertaForSequenceClassification",
       make<RobertaForSequenceClassification, roberta_config_from_json>},
      {"RobertaForTokenClassification",
       make<RobertaForTokenClassification, roberta_config_from_json>},
      {"DistilBertForMaskedLM", make<DistilBertForMaskedLM, distilbert_config_from_json>},
      {"DistilBertForSequenceClassification",
       make<DistilBertForSequenceClassification, distilbert_config_from_json>},
      {"DistilBertForTokenClassification",
       make<DistilBertForTokenClassification, distilbert_config_from_json>},
      {"GPT2LMHeadModel", make<GPT, gpt2_config_from_json>},
      {"BartForConditionalGeneration", make<EncoderDecoder, bart_config_from_json>},
      {"T5ForConditionalGeneration", make<T5ForConditionalGeneration, t5_config_from_json>},
  };
  return table;
}

}  // namespace

std::shared_ptr<PretrainedModel> model_from_config(const nlohmann::json& config, uint64_t seed,
                                                   DType dtype) {
  const std::string arch = declared_architecture(config);
  const auto it = architectures().find(arch);
  if (it == architectures().end()) {
    std::vector<std::string> known;
    for (const auto& [name, factory] : architectures()) known.push_back(name);
    fail("config.json: unsupported architecture '{}'; heed builds {}", arch,
         fmt::join(known, ", "));
  }
  return it->second(config, seed, dtype);
}

std::shared_ptr<PretrainedModel> from_pretrained(const std::string& dir, DType dtype) {
  std::shared_ptr<PretrainedModel> model = model_from_config(read_model_config(dir), 0, dtype);
  load_weights(*model, io::SafetensorsFile((fs::path(dir) / "model.safetensors").string()));
  return model;
}

}  // namespace heed::nn
