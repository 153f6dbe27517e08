#include "train/run/run_tokenizer.h"

#include <filesystem>
#include <fstream>

#include "data/byte_level_bpe_trainer.h"
#include "data/tokenizer_io.h"
#include "data/wordpiece_trainer.h"
#include "io/json_file.h"
#include "train/tasks/task.h"

namespace heed::train {

namespace fs = std::filesystem;

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

namespace {

data::WordPieceOptions wordpiece_options(const TokenizerConfig& t) {
  data::WordPieceOptions o;
  o.lowercase = t.lowercase;
  o.strip_accents = t.strip_accents;
  return o;
}

// The texts of data.train that a vocabulary is trained on, as the task picks them from each
// line.
void feed_trainer(data::WordPieceTrainer& trainer, const RunConfig& c) {
  std::ifstream in(c.data.train);
  HEED_CHECK(in.good(), "{}: cannot read the training data", c.data.train);
  const TrainingTask& task = task_for(c.task.name);
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
  const std::optional<std::string> dir = tokenizer_directory(c);
  HEED_CHECK(dir.has_value(), "tokenizer: no vocab, vocab_size or init_from to take it from");
  return data::load_wordpiece(*dir);
}

// The special token a trained byte-level BPE gets, as GPT-2's: documents end in it.
constexpr const char* kEndOfText = "<|endoftext|>";

// RoBERTa's special tokens at its ids (<s> 0, <pad> 1, </s> 2, <unk> 3), so that
// RobertaConfig's defaults (pad_token_id 1, bos 0, eos 2) hold; <mask> follows them.
const std::vector<std::string> kRobertaSpecials = {"<s>", "<pad>", "</s>", "<unk>", "<mask>"};

data::BpeTokenizer bpe_for(const RunConfig& c, const Log& log) {
  const TokenizerConfig& t = c.tokenizer;
  if (t.vocab && fs::exists(fs::path(*t.vocab) / "vocab.json"))
    return data::BpeTokenizer::load(*t.vocab);
  if (!t.vocab_size) {
    const std::optional<std::string> dir = tokenizer_directory(c);
    HEED_CHECK(dir.has_value(), "tokenizer: no vocab, vocab_size or init_from");
    return data::BpeTokenizer::load(*dir);
  }
  const std::string dir = t.vocab ? *t.vocab : default_vocab_path(c);
  // An encoder's BPE is RoBERTa's (its template and <mask>); otherwise GPT-2's.
  const bool roberta = encoder_tokenizer(c.model.arch()) == TokenizerType::kBpe;
  log(fmt::format("training a byte-level BPE of {} tokens on {}", *t.vocab_size, c.data.train));
  data::TrainedByteLevelBpe trained;
  try {
    trained = data::train_byte_level_bpe(
        std::vector<std::string>{c.data.train},
        {.vocab_size = static_cast<int32_t>(*t.vocab_size),
         .min_frequency = t.min_frequency,
         .special_tokens = roberta ? kRobertaSpecials : std::vector<std::string>{kEndOfText}});
  } catch (const Error& e) {  // a size below the alphabet: the config's to change
    throw ConfigError(
        fmt::format("{}: tokenizer.{}", c.origins.where("tokenizer.vocab_size"), e.what()));
  }
  fs::create_directories(dir);
  data::save_byte_level_bpe(trained, dir);
  // The class names the special tokens' roles to load() (tok.save writes the full file).
  if (roberta) {
    io::write_json_file((fs::path(dir) / "tokenizer_config.json").string(),
                        {{"tokenizer_class", "RobertaTokenizer"}});
  }
  data::BpeTokenizer tok = data::BpeTokenizer::load(dir);
  tok.save(dir, c.data.max_seq_length);  // the special tokens' roles, for transformers too
  log(fmt::format("wrote {} ({} tokens, {} merges)", dir, trained.tokens.size(),
                  trained.merges.size()));
  return tok;
}

data::SentencePieceTokenizer sentencepiece_model_for(const RunConfig& c, const Log& log) {
  const TokenizerConfig& t = c.tokenizer;
  if (t.vocab && fs::exists(*t.vocab)) return data::SentencePieceTokenizer::load(*t.vocab);
  if (!t.vocab_size) {
    const std::optional<std::string> dir = tokenizer_directory(c);
    HEED_CHECK(dir.has_value(), "tokenizer: no vocab, vocab_size or init_from");
    return data::load_sentencepiece(*dir);
  }
  const fs::path path = t.vocab ? *t.vocab : default_vocab_path(c);
  log(fmt::format("training a SentencePiece {} model of {} pieces on {}", t.model_type,
                  *t.vocab_size, c.data.train));
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  data::SentencePieceTrainOptions o{.input = c.data.train,
                                    .model_prefix = (path.parent_path() / path.stem()).string(),
                                    .model_type = t.model_type,
                                    .vocab_size = static_cast<int32_t>(*t.vocab_size)};
  data::use_t5_special_ids(o);
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

// The model with the sentinels the config asks for (a directory's own when it asks nothing).
data::SentencePieceTokenizer sentencepiece_for(const RunConfig& c, const Log& log) {
  data::SentencePieceTokenizer tok = sentencepiece_model_for(c, log);
  if (c.tokenizer.extra_ids)
    return tok.with_extra_ids(static_cast<int32_t>(*c.tokenizer.extra_ids));
  return tok;
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
  if (const std::optional<std::string> dir = tokenizer_directory(c); dir && !t.vocab)
    return check_units(data::load_char_tokenizer(*dir), t, *dir);
  // Sources and targets may be split differently; other tasks split every field alike.
  const bool paired = task_for(c.task.name).has_targets();
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

}  // namespace

data::TextTokenizer tokenizer_for(const RunConfig& c, const Log& log) {
  // A run that starts from a checkpoint (or learns from a teacher) and names no tokenizer of
  // its own takes the checkpoint's, whatever its kind.
  const TokenizerConfig& t = c.tokenizer;
  const std::optional<std::string> dir = tokenizer_directory(c);
  if (dir && !t.vocab && !t.vocab_size && !t.extra_ids &&
      !c.origins.of_key.contains("tokenizer.type"))
    return data::TextTokenizer::load(*dir);
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

}  // namespace heed::train
