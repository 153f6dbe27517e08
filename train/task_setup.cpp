#include "train/task_setup.h"

#include <filesystem>
#include <fstream>

#include "data/collators.h"
#include "data/token_cache.h"
#include "data/wordpiece_trainer.h"
#include "nn/models/bert.h"
#include "nn/models/encoder_decoder.h"
#include "nn/models/gpt.h"
#include "nn/pretrained_io.h"
#include "train/tokenizer_io.h"

namespace heed::train {
namespace {

namespace fs = std::filesystem;

data::WordPieceOptions wordpiece_options(const TokenizerConfig& t) {
  data::WordPieceOptions o;
  o.lowercase = t.lowercase;
  o.strip_accents = t.strip_accents;
  return o;
}

// The corpus lines a vocabulary is trained on: the text column of TSV/CoNLL files, or
// every line of plain text.
void feed_trainer(data::WordPieceTrainer& trainer, const RunConfig& c) {
  std::ifstream in(c.data.train);
  HEED_CHECK(in.good(), "{}: cannot read the training data", c.data.train);
  std::string line;
  while (std::getline(in, line)) {
    if (c.task == Task::kClassification || c.task == Task::kSeq2Seq) {
      auto fields = data::split_tabs(line);
      for (size_t i = 1; i < fields.size(); ++i) trainer.add_text(fields[i]);
    } else if (c.task == Task::kTokenClassification) {
      auto fields = data::split_tabs(line);
      if (!fields.empty()) trainer.add_text(fields[0]);
    } else {
      trainer.add_text(line);
    }
  }
}

data::WordPieceTokenizer wordpiece_for(const RunConfig& c, const Log& log) {
  const TokenizerConfig& t = c.tokenizer;
  if (t.vocab && fs::exists(*t.vocab)) {
    return data::WordPieceTokenizer::from_file(*t.vocab, wordpiece_options(t));
  }
  if (t.vocab_size) {
    const std::string path =
        t.vocab ? *t.vocab : (fs::path(c.train.output_dir) / "vocab.txt").string();
    log(fmt::format("training a WordPiece vocabulary of {} tokens on {}", *t.vocab_size,
                    c.data.train));
    data::WordPieceTrainer trainer({.vocab_size = static_cast<size_t>(*t.vocab_size),
                                    .min_frequency = t.min_frequency,
                                    .lowercase = t.lowercase});
    feed_trainer(trainer, c);
    data::Vocab vocab = trainer.train();
    if (fs::path(path).has_parent_path()) fs::create_directories(fs::path(path).parent_path());
    vocab.save(path);
    log(fmt::format("wrote {} ({} tokens)", path, vocab.size()));
    return data::WordPieceTokenizer(std::move(vocab), wordpiece_options(t));
  }
  HEED_CHECK(c.init_from.has_value(),
             "tokenizer: no vocab, vocab_size or init_from to take it from");
  return load_wordpiece(*c.init_from);
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
    return check_units(load_char_tokenizer(*c.init_from), t, *c.init_from);
  // Seq2seq sources and targets may be split differently; other tasks split every field alike.
  const bool paired = c.task == Task::kSeq2Seq;
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
  const std::string path =
      t.vocab ? *t.vocab : (fs::path(c.train.output_dir) / "char_tokenizer.json").string();
  if (fs::path(path).has_parent_path()) fs::create_directories(fs::path(path).parent_path());
  tok.save(path);
  log(fmt::format("built a character vocabulary of {} symbols: {}", tok.vocab_size(), path));
  return tok;
}

std::shared_ptr<const data::TokenCache> cache_for(const std::string& corpus, const RunConfig& c,
                                                  const std::string& split,
                                                  const data::WordPieceTokenizer& tok,
                                                  const Log& log) {
  const fs::path dir = fs::path(c.train.output_dir) / "cache";
  fs::create_directories(dir);
  return std::make_shared<const data::TokenCache>(data::TokenCache::open_or_build(
      corpus, (dir / (split + ".tokens")).string(), tok,
      [&](const std::string& why) { log(fmt::format("tokenizing {} ({})", corpus, why)); }));
}

}  // namespace

TaskData build_task_data(const RunConfig& c, const Log& log) {
  TaskData d;
  if (c.tokenizer.type == TokenizerType::kWordPiece) {
    d.wordpiece = wordpiece_for(c, log);
  } else {
    d.chars = chars_for(c, log);
  }
  const size_t max_len = static_cast<size_t>(c.data.max_seq_length);
  auto splits = std::vector<std::pair<std::string, std::optional<std::string>>>{
      {"train", c.data.train}, {"valid", c.data.valid}, {"test", c.data.test}};
  std::vector<std::shared_ptr<const data::Dataset>*> targets{&d.train, &d.valid, &d.test};
  data::LabelNames labels = c.data.labels.value_or(data::LabelNames{});
  if (c.task == Task::kTokenClassification && labels.empty()) {
    std::vector<std::string> files;
    for (const auto& [split, path] : splits)
      if (path) files.push_back(*path);
    labels = data::conll_tag_names(files);
  }

  for (size_t i = 0; i < splits.size(); ++i) {
    const auto& [split, path] = splits[i];
    if (!path) continue;
    std::shared_ptr<const data::Dataset> ds;
    switch (c.task) {
      case Task::kMlm: {
        const auto& tok = *d.wordpiece;
        ds = std::make_shared<data::MlmWindowDataset>(cache_for(*path, c, split, tok, log),
                                                      tok.cls_id(), tok.sep_id(), max_len);
        break;
      }
      case Task::kClm: {
        HEED_CHECK(d.wordpiece.has_value(), "task clm: needs a wordpiece tokenizer");
        const auto& tok = *d.wordpiece;
        ds = std::make_shared<data::CausalWindowDataset>(cache_for(*path, c, split, tok, log),
                                                         tok.sep_id(), max_len);
        break;
      }
      case Task::kClassification: {
        auto set = std::make_shared<data::TextClassificationDataset>(*path, *d.wordpiece, max_len,
                                                                     labels, c.data.truncation);
        if (labels.empty()) labels = set->labels();
        ds = set;
        break;
      }
      case Task::kTokenClassification: {
        auto set = std::make_shared<data::TokenClassificationDataset>(*path, *d.wordpiece, max_len,
                                                                      labels);
        if (labels.empty()) labels = set->labels();
        ds = set;
        break;
      }
      case Task::kSeq2Seq: {
        data::EncodeFn encode, encode_target;
        if (d.chars) {
          encode = [tok = *d.chars](std::string_view s) { return tok.encode(s); };
          encode_target = [tok = *d.chars](std::string_view s) { return tok.encode_target(s); };
        } else {
          encode = [tok = *d.wordpiece](std::string_view s) { return tok.encode_ids(s); };
          encode_target = encode;
        }
        ds = std::make_shared<data::Seq2SeqDataset>(*path, encode, encode_target,
                                                    static_cast<size_t>(c.data.max_source_length),
                                                    static_cast<size_t>(c.data.max_target_length));
        break;
      }
    }
    HEED_CHECK(ds->size() > 0, "data.{}: {} holds no examples", split, *path);
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

  switch (c.task) {
    case Task::kMlm: {
      data::TokenIds ids = data::TokenIds::from(*d.wordpiece);
      data::MlmOptions o{c.data.mlm_probability, c.data.mask_replace_prob,
                         c.data.random_replace_prob};
      d.collate = [ids, o](std::span<const data::Example> ex, data::Rng& rng) {
        return data::collate_mlm(ex, ids, o, rng);
      };
      break;
    }
    case Task::kClm: {
      const int32_t pad = d.wordpiece->pad_id();
      d.collate = [pad](std::span<const data::Example> ex, data::Rng&) {
        return data::collate_causal_lm(ex, pad);
      };
      break;
    }
    case Task::kClassification: {
      const int32_t pad = d.wordpiece->pad_id();
      d.collate = [pad](std::span<const data::Example> ex, data::Rng&) {
        return data::collate_classification(ex, pad);
      };
      break;
    }
    case Task::kTokenClassification: {
      const int32_t pad = d.wordpiece->pad_id();
      d.collate = [pad](std::span<const data::Example> ex, data::Rng&) {
        return data::collate_token_classification(ex, pad);
      };
      break;
    }
    case Task::kSeq2Seq: {
      data::Seq2SeqIds ids;
      if (d.chars) {
        ids = {d.chars->pad_id(), d.chars->pad_id(), d.chars->bos_id(), d.chars->eos_id()};
      } else {
        ids = {d.wordpiece->pad_id(), d.wordpiece->pad_id(), d.wordpiece->cls_id(),
               d.wordpiece->sep_id()};
      }
      d.collate = [ids](std::span<const data::Example> ex, data::Rng&) {
        return data::collate_seq2seq(ex, ids);
      };
      break;
    }
  }
  return d;
}

std::shared_ptr<nn::PretrainedModel> build_model(const RunConfig& c, const TaskData& d,
                                                 const Log& log) {
  const ModelConfig& m = c.model;
  const int64_t vocab = d.wordpiece ? d.wordpiece->vocab_size() : d.chars->vocab_size();
  const uint64_t seed = static_cast<uint64_t>(c.train.seed);
  std::shared_ptr<nn::PretrainedModel> model;
  switch (m.arch) {
    case Arch::kBert: {
      nn::BertConfig b = m.bert;
      b.vocab_size = m.vocab_size.value_or(vocab);
      b.pad_token_id = m.pad_token_id.value_or(d.wordpiece->pad_id());
      if (c.task == Task::kClassification || c.task == Task::kTokenClassification) {
        b.num_labels = m.num_labels.value_or(static_cast<int64_t>(d.labels.size()));
        b.id2label = d.labels;
        // One label makes Hugging Face's regression head (an MSE loss): nothing to smooth.
        HEED_CHECK(b.num_labels > 1 || c.train.label_smoothing == 0.0,
                   "train.label_smoothing: the model has one label, which makes a regression "
                   "head (MSE loss); smoothing needs at least 2 labels");
      }
      if (c.task == Task::kClassification) {
        model = std::make_shared<nn::BertForSequenceClassification>(b, seed);
      } else if (c.task == Task::kTokenClassification) {
        model = std::make_shared<nn::BertForTokenClassification>(b, seed);
      } else {
        model = std::make_shared<nn::BertForMaskedLM>(b, seed);
      }
      break;
    }
    case Arch::kGpt2: {
      nn::GPT2Config g = m.gpt2;
      g.vocab_size = m.vocab_size.value_or(vocab);
      const int64_t sep = d.wordpiece ? d.wordpiece->sep_id() : d.chars->eos_id();
      g.bos_token_id = m.bos_token_id.value_or(sep);
      g.eos_token_id = m.eos_token_id.value_or(sep);
      model = std::make_shared<nn::GPT>(g, seed);
      break;
    }
    case Arch::kBart: {
      nn::BartConfig b = m.bart;
      b.vocab_size = m.vocab_size.value_or(vocab);
      if (d.chars) {
        b.pad_token_id = m.pad_token_id.value_or(d.chars->pad_id());
        b.bos_token_id = m.bos_token_id.value_or(d.chars->bos_id());
        b.eos_token_id = m.eos_token_id.value_or(d.chars->eos_id());
        b.decoder_start_token_id = m.decoder_start_token_id.value_or(d.chars->bos_id());
      } else {
        b.pad_token_id = m.pad_token_id.value_or(d.wordpiece->pad_id());
        b.bos_token_id = m.bos_token_id.value_or(d.wordpiece->cls_id());
        b.eos_token_id = m.eos_token_id.value_or(d.wordpiece->sep_id());
        b.decoder_start_token_id = m.decoder_start_token_id.value_or(d.wordpiece->cls_id());
      }
      model = std::make_shared<nn::EncoderDecoder>(b, seed);
      break;
    }
  }
  if (c.init_from) {
    nn::SafetensorsFile weights((fs::path(*c.init_from) / "model.safetensors").string());
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

void save_tokenizer(const RunConfig& c, const TaskData& d, const std::string& dir) {
  if (d.wordpiece) {
    save_wordpiece(*d.wordpiece, dir, c.data.max_seq_length, c.data.truncation);
  } else {
    save_char_tokenizer(*d.chars, dir);
  }
}

}  // namespace heed::train
