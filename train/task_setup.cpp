#include "train/task_setup.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "data/byte_level_bpe_trainer.h"
#include "data/token_cache.h"
#include "data/tokenizer_io.h"
#include "data/wordpiece_trainer.h"
#include "nn/pretrained_io.h"
#include "train/tasks/task.h"

namespace heed::train {
namespace {

namespace fs = std::filesystem;

data::WordPieceOptions wordpiece_options(const TokenizerConfig& t) {
  data::WordPieceOptions o;
  o.lowercase = t.lowercase;
  o.strip_accents = t.strip_accents;
  return o;
}

// Where a trained tokenizer goes when tokenizer.vocab does not say.
std::string default_vocab_path(const RunConfig& c) {
  const fs::path dir(c.train.output_dir);
  switch (c.tokenizer.type) {
    case TokenizerType::kWordPiece:
      return (dir / "vocab.txt").string();
    case TokenizerType::kBpe:
      return (dir / "bpe").string();
    case TokenizerType::kSentencePiece:
      return (dir / "spiece.model").string();
    case TokenizerType::kChar:
      break;
  }
  return (dir / "char_tokenizer.json").string();
}

// The texts of data.train that a vocabulary is trained on, as the task picks them from each
// line.
void feed_trainer(data::WordPieceTrainer& trainer, const RunConfig& c) {
  std::ifstream in(c.data.train);
  HEED_CHECK(in.good(), "{}: cannot read the training data", c.data.train);
  const TrainingTask& task = task_for(c.task);
  std::string line;
  while (std::getline(in, line)) {
    for (std::string_view text : task.vocabulary_texts(line)) trainer.add_text(text);
  }
}

data::WordPieceTokenizer wordpiece_for(const RunConfig& c, const Log& log) {
  const TokenizerConfig& t = c.tokenizer;
  if (t.vocab && fs::exists(*t.vocab)) {
    return data::WordPieceTokenizer::from_file(*t.vocab, wordpiece_options(t));
  }
  if (t.vocab_size) {
    const std::string path = t.vocab ? *t.vocab : default_vocab_path(c);
    log(fmt::format("training a WordPiece vocabulary of {} tokens on {}", *t.vocab_size,
                    c.data.train));
    data::WordPieceTrainer trainer({.vocab_size = static_cast<size_t>(*t.vocab_size),
                                    .min_frequency = t.min_frequency,
                                    .lowercase = t.lowercase});
    feed_trainer(trainer, c);
    data::Vocab vocab;
    try {
      vocab = trainer.train();
    } catch (const Error& e) {  // a size below the corpus's alphabet: the config's to change
      throw ConfigError(
          fmt::format("{}: tokenizer.{}", c.origins.where("tokenizer.vocab_size"), e.what()));
    }
    if (fs::path(path).has_parent_path()) fs::create_directories(fs::path(path).parent_path());
    vocab.save(path);
    log(fmt::format("wrote {} ({} tokens)", path, vocab.size()));
    return data::WordPieceTokenizer(std::move(vocab), wordpiece_options(t));
  }
  HEED_CHECK(c.init_from.has_value(),
             "tokenizer: no vocab, vocab_size or init_from to take it from");
  return data::load_wordpiece(*c.init_from);
}

// The special token a trained byte-level BPE gets, as GPT-2's: documents end in it.
constexpr const char* kEndOfText = "<|endoftext|>";

data::BpeTokenizer bpe_for(const RunConfig& c, const Log& log) {
  const TokenizerConfig& t = c.tokenizer;
  if (t.vocab && fs::exists(fs::path(*t.vocab) / "vocab.json"))
    return data::BpeTokenizer::load(*t.vocab);
  if (!t.vocab_size) {
    HEED_CHECK(c.init_from.has_value(), "tokenizer: no vocab, vocab_size or init_from");
    return data::BpeTokenizer::load(*c.init_from);
  }
  const std::string dir = t.vocab ? *t.vocab : default_vocab_path(c);
  log(fmt::format("training a byte-level BPE of {} tokens on {}", *t.vocab_size, c.data.train));
  data::TrainedByteLevelBpe trained;
  try {
    trained = data::train_byte_level_bpe(std::vector<std::string>{c.data.train},
                                         {.vocab_size = static_cast<int32_t>(*t.vocab_size),
                                          .min_frequency = t.min_frequency,
                                          .special_tokens = {kEndOfText}});
  } catch (const Error& e) {  // a size below the alphabet: the config's to change
    throw ConfigError(
        fmt::format("{}: tokenizer.{}", c.origins.where("tokenizer.vocab_size"), e.what()));
  }
  fs::create_directories(dir);
  data::save_byte_level_bpe(trained, dir);
  data::BpeTokenizer tok = data::BpeTokenizer::load(dir);
  tok.save(dir, c.data.max_seq_length);  // the special tokens' roles, for transformers too
  log(fmt::format("wrote {} ({} tokens, {} merges)", dir, trained.tokens.size(),
                  trained.merges.size()));
  return tok;
}

data::SentencePieceTokenizer sentencepiece_for(const RunConfig& c, const Log& log) {
  const TokenizerConfig& t = c.tokenizer;
  if (t.vocab && fs::exists(*t.vocab)) return data::SentencePieceTokenizer::load(*t.vocab);
  if (!t.vocab_size) {
    HEED_CHECK(c.init_from.has_value(), "tokenizer: no vocab, vocab_size or init_from");
    return data::SentencePieceTokenizer::load((fs::path(*c.init_from) / "spiece.model").string());
  }
  const fs::path path = t.vocab ? *t.vocab : default_vocab_path(c);
  log(fmt::format("training a SentencePiece {} model of {} pieces on {}", t.model_type,
                  *t.vocab_size, c.data.train));
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  // T5's layout of the special pieces (pad 0, </s> 1, <unk> 2), and a <s> for sequences that
  // start with one.
  data::SentencePieceTrainOptions o{.input = c.data.train,
                                    .model_prefix = (path.parent_path() / path.stem()).string(),
                                    .model_type = t.model_type,
                                    .vocab_size = static_cast<int32_t>(*t.vocab_size)};
  o.pad_id = 0;
  o.eos_id = 1;
  o.unk_id = 2;
  o.bos_id = 3;
  try {
    data::SentencePieceTokenizer::train(o);
  } catch (const Error& e) {
    throw ConfigError(
        fmt::format("{}: tokenizer.{}", c.origins.where("tokenizer.vocab_size"), e.what()));
  }
  const std::string written = o.model_prefix + ".model";
  if (written != path.string()) fs::rename(written, path);
  log(fmt::format("wrote {}", path.string()));
  return data::SentencePieceTokenizer::load(path.string());
}

// A character vocabulary read from a file must split text as the config says.
data::CharTokenizer check_units(data::CharTokenizer tok, const TokenizerConfig& t,
                                const std::string& source) {
  const auto name = data::CharTokenizer::unit_name;
  HEED_CHECK(tok.unit() == t.unit, "tokenizer.unit: {} splits by {}, the config says {}", source,
             name(tok.unit()), name(t.unit));
  const auto target = t.target_unit.value_or(t.unit);
  HEED_CHECK(tok.target_unit() == target,
             "tokenizer.target_unit: {} splits targets by {}, the config says {}", source,
             name(tok.target_unit()), name(target));
  return tok;
}

data::CharTokenizer chars_for(const RunConfig& c, const Log& log) {
  const TokenizerConfig& t = c.tokenizer;
  if (t.vocab && fs::exists(*t.vocab))
    return check_units(data::CharTokenizer::load(*t.vocab), t, *t.vocab);
  if (c.init_from && !t.vocab)
    return check_units(data::load_char_tokenizer(*c.init_from), t, *c.init_from);
  // Sources and targets may be split differently; other tasks split every field alike.
  const bool paired = task_for(c.task).has_targets();
  std::vector<std::string> sources, targets;
  std::ifstream in(c.data.train);
  std::string line;
  while (std::getline(in, line)) {
    auto fields = data::split_tabs(line);
    for (size_t i = 0; i < fields.size(); ++i)
      (paired && i > 0 ? targets : sources).emplace_back(fields[i]);
  }
  data::CharTokenizer tok =
      data::CharTokenizer::build_pair(sources, t.unit, targets, t.target_unit.value_or(t.unit));
  const std::string path = t.vocab ? *t.vocab : default_vocab_path(c);
  if (fs::path(path).has_parent_path()) fs::create_directories(fs::path(path).parent_path());
  tok.save(path);
  log(fmt::format("built a character vocabulary of {} symbols: {}", tok.vocab_size(), path));
  return tok;
}

data::TextTokenizer tokenizer_for(const RunConfig& c, const Log& log) {
  // A run that starts from a checkpoint and names no tokenizer of its own takes the
  // checkpoint's, whatever its kind.
  const TokenizerConfig& t = c.tokenizer;
  if (c.init_from && !t.vocab && !t.vocab_size && !c.origins.of_key.contains("tokenizer.type"))
    return data::TextTokenizer::load(*c.init_from);
  switch (c.tokenizer.type) {
    case TokenizerType::kWordPiece:
      return data::TextTokenizer(wordpiece_for(c, log));
    case TokenizerType::kBpe:
      return data::TextTokenizer(bpe_for(c, log));
    case TokenizerType::kSentencePiece:
      return data::TextTokenizer(sentencepiece_for(c, log));
    case TokenizerType::kChar:
      break;
  }
  return data::TextTokenizer(chars_for(c, log));
}

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
  const TrainingTask& task = task_for(c.task);
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
  std::shared_ptr<nn::PretrainedModel> model = task_for(c.task).make_model(c, d);
  if (c.init_from) {
    io::SafetensorsFile weights((fs::path(*c.init_from) / "model.safetensors").string());
    nn::LoadReport r = nn::load_weights(*model, weights, {.strict = false});
    log(fmt::format("init_from {}: loaded {} tensors; new: [{}]; unused: {}", *c.init_from,
                    r.loaded.size(), fmt::join(r.missing, ", "), r.unexpected.size()));
    HEED_CHECK(!r.loaded.empty(), "init_from {}: no tensor of the checkpoint fits {}", *c.init_from,
               model->architecture());
  }
  log(fmt::format("model: {} with {:.2f}M parameters", model->architecture(),
                  model->num_parameters() / 1e6));
  return model;
}

}  // namespace heed::train
