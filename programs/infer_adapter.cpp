#include "programs/infer_adapter.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "base/error.h"
#include "data/text_tokenizer.h"
#include "data/tokenizer_io.h"
#include "nn/lora.h"
#include "nn/lora_files.h"
#include "nn/pretrained_io.h"
#include "programs/infer_common.h"

namespace heed::infer {
namespace {

namespace fs = std::filesystem;

bool has_adapter(const std::string& dir) {
  return fs::is_regular_file(fs::path(dir) / "adapter_config.json");
}

}  // namespace

std::string adapter_directory(const CommonArgs& args) {
  if (!args.adapter.empty()) {
    HEED_CHECK(fs::is_directory(args.adapter), "--adapter: directory '{}' does not exist",
               args.adapter);
    HEED_CHECK(has_adapter(args.adapter),
               "--adapter: {} holds no adapter_config.json (is it a LoRA adapter directory?)",
               args.adapter);
    return args.adapter;
  }
  return has_adapter(args.checkpoint) ? args.checkpoint : "";
}

std::string model_config_directory(const CommonArgs& args) {
  const std::string adapter = adapter_directory(args);
  if (!adapter.empty() && fs::is_regular_file(fs::path(adapter) / "config.json")) return adapter;
  return args.checkpoint;
}

std::shared_ptr<nn::PretrainedModel> with_adapter(const CommonArgs& args,
                                                  const nlohmann::json& config) {
  const std::string adapter = adapter_directory(args);
  std::shared_ptr<nn::PretrainedModel> model = nn::model_from_config(config, 0);
  const nn::LoadReport base = nn::load_weights(
      *model, io::SafetensorsFile((fs::path(args.checkpoint) / "model.safetensors").string()),
      {.strict = false});
  // Dropout never runs in inference, so the adapters' A can start anywhere: the file sets it.
  Generator unused(0);
  const std::vector<std::string> from_adapter = nn::apply_adapter(*model, adapter, unused);
  for (const std::string& name : base.missing) {
    const bool parameter = std::ranges::any_of(model->named_parameters(),
                                               [&](const auto& p) { return p.first == name; });
    HEED_CHECK(!parameter || std::ranges::count(from_adapter, name) > 0,
               "{} is in neither {}/model.safetensors nor the adapter {} (a {} head the base "
               "lacks must be among the adapter's modules_to_save)",
               name, args.checkpoint, adapter, model->architecture());
  }
  return model;
}

void run_merge(const MergeArgs& args, std::ostream& out) {
  HEED_CHECK(!adapter_directory(args).empty(),
             "{} holds no adapter_config.json and --adapter names none: nothing to merge",
             args.checkpoint);
  HEED_CHECK(!args.out.empty(), "--out: the merged model's directory is required");
  HEED_CHECK(fs::weakly_canonical(args.out) != fs::weakly_canonical(args.checkpoint),
             "--out: {} is the checkpoint itself; write the merged model elsewhere", args.out);
  const std::string config_dir = model_config_directory(args);
  std::shared_ptr<nn::PretrainedModel> model =
      with_adapter(args, nn::read_model_config(config_dir));
  nn::merge_lora(*model);
  const data::TextTokenizer tokenizer = data::TextTokenizer::load(args.checkpoint);
  // The inputs' cut as the adapter's training made it, when its directory says (a heed run's
  // checkpoint), else as the base's.
  const std::string cut_from = fs::is_regular_file(fs::path(config_dir) / "tokenizer_config.json")
                                   ? config_dir
                                   : args.checkpoint;
  const data::TruncationSettings cut = data::load_truncation(cut_from);
  nn::save_pretrained(*model, args.out);
  tokenizer.save(args.out, cut.max_length.value_or(0), cut.side);
  if (args.json) {
    out << nlohmann::json{{"merged", args.out}, {"architecture", model->architecture()}}.dump()
        << "\n";
  } else {
    out << fmt::format("merged {} into {}: {} ({})\n", adapter_directory(args), args.out,
                       model->architecture(), args.checkpoint);
  }
}

}  // namespace heed::infer
