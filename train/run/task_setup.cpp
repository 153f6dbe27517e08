#include "train/run/task_setup.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "data/token_cache.h"
#include "data/tokenizer_io.h"
#include "nn/pretrained_io.h"
#include "train/run/lora_run.h"
#include "train/run/run_tokenizer.h"
#include "train/tasks/task.h"

namespace heed::train {
namespace {

namespace fs = std::filesystem;

std::shared_ptr<const data::TokenCache> cache_for(const std::string& corpus, const RunConfig& c,
                                                  const std::string& split,
                                                  const data::TextTokenizer& tok, const Log& log) {
  const fs::path dir = fs::path(c.train.output_dir) / "cache";
  fs::create_directories(dir);
  return std::make_shared<const data::TokenCache>(data::TokenCache::open_or_build(
      corpus, (dir / (split + ".tokens")).string(), tok,
      [&](const std::string& why) { log(fmt::format("tokenizing {} ({})", corpus, why)); }));
}

// With no data.labels the classes are whatever the data holds, so a typo in one row of
// data.train becomes a class of its own. Each class with fewer than kFewExamples training
// examples is named (the first kMostNamed of them), with where it is first seen.
constexpr size_t kFewExamples = 3;
constexpr size_t kMostNamed = 10;

void warn_of_rare_classes(const data::LabelNames& labels,
                          const std::vector<std::shared_ptr<const data::Dataset>>& splits,
                          const Log& log) {
  if (splits.empty() || !splits[0]) return;
  const std::vector<data::LabelCount> train = splits[0]->label_counts();
  if (train.empty()) return;  // not a classification task
  size_t named = 0, more = 0;
  for (const std::string& label : labels) {
    const auto in_train = std::ranges::find(train, label, &data::LabelCount::label);
    const size_t count = in_train == train.end() ? 0 : in_train->count;
    if (count >= kFewExamples) continue;
    if (named == kMostNamed) {
      ++more;
      continue;
    }
    ++named;
    std::string where = in_train == train.end() ? "" : in_train->first;
    for (size_t i = 1; where.empty() && i < splits.size(); ++i) {  // a tag of valid or test only
      if (!splits[i]) continue;
      const std::vector<data::LabelCount> other = splits[i]->label_counts();
      const auto it = std::ranges::find(other, label, &data::LabelCount::label);
      if (it != other.end()) where = it->first;
    }
    log(fmt::format(
        "warning: class '{}' has {} training example{}{}: a typo? data.labels is not set, so "
        "the classes are those the data holds; list them in data.labels to make any other an "
        "error",
        label, count, count == 1 ? "" : "s", where.empty() ? "" : " (first at " + where + ")"));
  }
  if (more > 0) {
    log(fmt::format("warning: {} more class{} with fewer than {} training examples", more,
                    more == 1 ? "" : "es", kFewExamples));
  }
}

}  // namespace

RunConfig with_written_vocabulary(const RunConfig& config) {
  RunConfig c = config;
  TokenizerConfig& t = c.tokenizer;
  if (t.vocab) return c;
  // A vocabulary trained to a size, or a char one built without init_from, is written into
  // output_dir.
  if (t.type == TokenizerType::kChar ? !c.init_from : t.vocab_size.has_value())
    t.vocab = default_vocab_path(c);
  return c;
}

std::vector<std::pair<std::string, std::string>> run_input_files(const RunConfig& config) {
  const RunConfig c = with_written_vocabulary(config);
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& [key, path] :
       {std::pair{"data.train", std::optional(c.data.train)}, std::pair{"data.valid", c.data.valid},
        std::pair{"data.test", c.data.test}, std::pair{"tokenizer.vocab", c.tokenizer.vocab}}) {
    if (path && fs::is_regular_file(*path)) files.emplace_back(key, *path);
  }
  if (c.tokenizer.type == TokenizerType::kBpe && c.tokenizer.vocab) {  // a directory
    for (const char* name : {"vocab.json", "merges.txt"}) {
      const fs::path file = fs::path(*c.tokenizer.vocab) / name;
      if (fs::is_regular_file(file)) files.emplace_back("tokenizer.vocab", file.string());
    }
  }
  return files;
}

TaskData build_task_data(const RunConfig& c, const Log& log) {
  TaskData d;
  d.tokenizer = std::make_shared<const data::TextTokenizer>(tokenizer_for(c, log));
  auto splits = std::vector<std::pair<std::string, std::optional<std::string>>>{
      {"train", c.data.train}, {"valid", c.data.valid}, {"test", c.data.test}};
  std::vector<std::shared_ptr<const data::Dataset>*> targets{&d.train, &d.valid, &d.test};
  const TrainingTask& task = task_for(c.task.name);
  std::vector<std::string> files;
  for (const auto& [split, path] : splits)
    if (path) files.push_back(*path);
  data::LabelNames labels = task.initial_labels(c, files);
  std::vector<std::shared_ptr<const data::Dataset>> read(splits.size());  // before any cut

  for (size_t i = 0; i < splits.size(); ++i) {
    // Named references, not a structured binding: the lambda below captures them, which
    // clang before 16 cannot do for a binding.
    const std::string& split = splits[i].first;
    const std::optional<std::string>& path = splits[i].second;
    if (!path) continue;
    const SplitSource source{
        .config = c, .data = d, .split = split, .path = *path, .token_cache = [&] {
          return cache_for(*path, c, split, *d.tokenizer, log);
        }};
    std::shared_ptr<const data::Dataset> ds = task.read_split(source, labels);
    HEED_CHECK(ds->size() > 0, "data.{}: {} holds no examples", split, *path);
    read[i] = ds;
    if (split == "train" && c.data.max_train_samples) {
      const size_t all = ds->size();
      ds =
          std::make_shared<data::FirstExamples>(ds, static_cast<size_t>(*c.data.max_train_samples));
      log(fmt::format("train: the first {} of {} examples from {} (data.max_train_samples)",
                      ds->size(), all, *path));
    } else {
      log(fmt::format("{}: {} examples from {}", split, ds->size(), *path));
    }
    *targets[i] = ds;
  }
  d.labels = labels;
  if (!c.data.labels) warn_of_rare_classes(labels, read, log);
  // A batch larger than the data set is the whole set (as PyTorch's DataLoader makes it): a
  // legitimate full-batch run on a few examples, but far more often a typo.
  if (static_cast<uint64_t>(c.train.batch_size) > d.train->size()) {
    const auto set_at = c.origins.of_key.find("train.batch_size");
    log(fmt::format(
        "warning: train.batch_size {}{} is more than the {} training examples: every step "
        "trains on all {} at once",
        c.train.batch_size, set_at == c.origins.of_key.end() ? "" : " (" + set_at->second + ")",
        d.train->size(), d.train->size()));
  }

  d.collate = task.collator(c, d);
  return d;
}

std::shared_ptr<nn::PretrainedModel> build_model(const RunConfig& c, const TaskData& d,
                                                 const Log& log) {
  std::shared_ptr<nn::PretrainedModel> model = task_for(c.task.name).make_model(c, d);
  std::vector<std::string> fresh;
  if (c.init_from) {
    io::SafetensorsFile weights((fs::path(*c.init_from) / "model.safetensors").string());
    nn::LoadReport r = nn::load_weights(*model, weights, {.strict = false});
    log(fmt::format("init_from {}: loaded {} tensors; new: [{}]; unused: {}", *c.init_from,
                    r.loaded.size(), fmt::join(r.missing, ", "), r.unexpected.size()));
    HEED_CHECK(!r.loaded.empty(), "init_from {}: no tensor of the checkpoint fits {}", *c.init_from,
               model->architecture());
    const std::vector<std::string> from_adapter = merge_init_from_adapter(c, *model, log);
    for (const std::string& name : r.missing) {
      if (std::ranges::count(from_adapter, name) == 0) fresh.push_back(name);
    }
  }
  set_up_lora(c, *model, fresh, log);
  log(fmt::format("model: {} with {:.2f}M parameters", model->architecture(),
                  model->num_parameters() / 1e6));
  return model;
}

}  // namespace heed::train
