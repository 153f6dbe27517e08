#include "data/tokenizer_io.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <type_traits>

#include "base/error.h"
#include "data/hf_tokenizer_json.h"
#include "io/atomic_file.h"
#include "io/json_file.h"

namespace heed::data {
namespace {

namespace fs = std::filesystem;

// tokenizer_config.json, parsed, and its path for messages.
struct TokenizerConfig {
  nlohmann::json json;
  std::string path;
};

// The class a directory's files imply when tokenizer_config.json does not name one (GPT-2's
// own directory names none): the files each Hugging Face class reads.
std::string class_from_files(const std::string& dir) {
  const fs::path base(dir);
  if (fs::exists(base / "vocab.txt")) return "BertTokenizer";
  if (fs::exists(base / "vocab.json") && fs::exists(base / "merges.txt")) return "GPT2Tokenizer";
  if (fs::exists(base / "spiece.model")) return "T5Tokenizer";
  if (fs::exists(base / "tokenizer.json")) return "PreTrainedTokenizerFast";
  fail(
      "{}: no tokenizer (none of tokenizer_config.json, vocab.txt, vocab.json with merges.txt, "
      "spiece.model or tokenizer.json)",
      dir);
}

TokenizerConfig read_tokenizer_config(const std::string& dir) {
  const fs::path path = fs::path(dir) / "tokenizer_config.json";
  if (!fs::exists(path)) {
    // A Hugging Face directory may carry only its vocabulary: a BERT one is lower-cased.
    return {{{"tokenizer_class", class_from_files(dir)}, {"do_lower_case", true}}, path.string()};
  }
  TokenizerConfig config{io::read_json_file(path.string()), path.string()};
  HEED_CHECK(config.json.is_object(), "{}: expected a JSON object of tokenizer settings, not {}",
             config.path, config.json.type_name());
  if (!config.json.contains("tokenizer_class") || config.json["tokenizer_class"].is_null())
    config.json["tokenizer_class"] = class_from_files(dir);
  return config;
}

// The string or boolean under `key`; `fallback` when the key is absent or null. A value of
// another type is an error naming the file and the key (nlohmann's own names neither).
template <typename T>
T setting(const TokenizerConfig& config, const char* key, const T& fallback) {
  static_assert(std::is_same_v<T, std::string> || std::is_same_v<T, bool>);
  const auto it = config.json.find(key);
  if (it == config.json.end() || it->is_null()) return fallback;
  constexpr bool is_bool = std::is_same_v<T, bool>;
  HEED_CHECK(is_bool ? it->is_boolean() : it->is_string(), "{}: {} is {}; it must be {}",
             config.path, key, it->dump(), is_bool ? "true or false" : "a string");
  return it->get<T>();
}

std::string class_of(const TokenizerConfig& config) {
  const std::string cls = setting<std::string>(config, "tokenizer_class", "BertTokenizer");
  // transformers' DistilBertTokenizer is BertTokenizer under another name (a subclass that
  // changes nothing): the same files, the same WordPiece.
  return cls == "DistilBertTokenizer" ? "BertTokenizer" : cls;
}

// A model_max_length above this is transformers' "no limit" sentinel (int(1e30)).
constexpr double kLargestMaxLength = 1e9;

}  // namespace

void save_wordpiece(const data::WordPieceTokenizer& tokenizer, const std::string& dir,
                    int64_t model_max_length, data::Truncation truncation) {
  fs::create_directories(dir);
  tokenizer.vocab().save((fs::path(dir) / "vocab.txt").string());
  // transformers' fast tokenizer reads tokenizer.json first; it needs BERT's [CLS] and [SEP].
  const data::WordPieceOptions& names = tokenizer.options();
  if (tokenizer.vocab().contains(names.cls_token) && tokenizer.vocab().contains(names.sep_token))
    write_tokenizer_json((fs::path(dir) / "tokenizer.json").string(), tokenizer);
  const data::WordPieceOptions& o = tokenizer.options();
  nlohmann::json j = {{"tokenizer_class", "BertTokenizer"},
                      {"do_lower_case", o.lowercase},
                      {"strip_accents", nullptr},
                      {"tokenize_chinese_chars", o.tokenize_chinese_chars},
                      {"model_max_length", model_max_length},
                      {"unk_token", o.unk_token},
                      {"pad_token", o.pad_token},
                      {"cls_token", o.cls_token},
                      {"sep_token", o.sep_token},
                      {"mask_token", o.mask_token}};
  if (o.strip_accents) j["strip_accents"] = *o.strip_accents;
  j["truncation_side"] = std::string(hf_truncation_side(truncation));
  j["heed_truncation"] = std::string(truncation_name(truncation));
  io::write_json_file((fs::path(dir) / "tokenizer_config.json").string(), j);
}

void save_char_tokenizer(const data::CharTokenizer& tokenizer, const std::string& dir) {
  fs::create_directories(dir);
  tokenizer.save((fs::path(dir) / "char_tokenizer.json").string());
  io::write_json_file((fs::path(dir) / "tokenizer_config.json").string(),
                      {{"tokenizer_class", "HeedCharTokenizer"}, {"file", "char_tokenizer.json"}});
}

void save_sentencepiece(const data::SentencePieceTokenizer& tokenizer, const std::string& dir,
                        int64_t model_max_length) {
  fs::create_directories(dir);
  io::write_file_atomically((fs::path(dir) / "spiece.model").string(), tokenizer.serialized());
  nlohmann::json sentinels = nlohmann::json::array();
  for (int32_t k = 0; k < tokenizer.extra_ids(); ++k)
    sentinels.push_back(tokenizer.token(tokenizer.sentinel_id(k)));
  nlohmann::json j = {{"tokenizer_class", "T5Tokenizer"},
                      {"extra_ids", tokenizer.extra_ids()},
                      {"model_max_length", model_max_length}};
  // T5Tokenizer's own defaults would name pieces the model may not have.
  nlohmann::json specials = nlohmann::json::object();
  for (const auto& [key, id] :
       {std::pair{"eos_token", tokenizer.eos_id()}, std::pair{"unk_token", tokenizer.unk_id()},
        std::pair{"pad_token", tokenizer.pad_id()}}) {
    j[key] = id >= 0 ? nlohmann::json(tokenizer.token(id)) : nlohmann::json(nullptr);
    if (id >= 0) specials[key] = tokenizer.token(id);
  }
  j["additional_special_tokens"] = sentinels;
  specials["additional_special_tokens"] = sentinels;
  io::write_json_file((fs::path(dir) / "tokenizer_config.json").string(), j);
  io::write_json_file((fs::path(dir) / "special_tokens_map.json").string(), specials);
}

data::SentencePieceTokenizer load_sentencepiece(const std::string& dir) {
  const TokenizerConfig config = read_tokenizer_config(dir);
  auto tokenizer = data::SentencePieceTokenizer::load((fs::path(dir) / "spiece.model").string());
  // T5Tokenizer adds 100 sentinels unless its config says otherwise.
  int64_t extra_ids = 100;
  if (const auto it = config.json.find("extra_ids"); it != config.json.end() && !it->is_null()) {
    HEED_CHECK(it->is_number_integer() && it->get<int64_t>() >= 0 &&
                   it->get<int64_t>() <= data::SentencePieceTokenizer::kMaxExtraIds,
               "{}: extra_ids is {}; it must be a whole number from 0 to {}", config.path,
               it->dump(), data::SentencePieceTokenizer::kMaxExtraIds);
    extra_ids = it->get<int64_t>();
  }
  return tokenizer.with_extra_ids(static_cast<int32_t>(extra_ids));
}

std::string tokenizer_class(const std::string& dir) {
  return class_of(read_tokenizer_config(dir));
}

data::WordPieceTokenizer load_wordpiece(const std::string& dir) {
  const TokenizerConfig config = read_tokenizer_config(dir);
  const std::string cls = class_of(config);
  HEED_CHECK(cls == "BertTokenizer", "{}: tokenizer is {}, not a WordPiece (BertTokenizer)", dir,
             cls);
  data::WordPieceOptions o;
  o.lowercase = setting(config, "do_lower_case", true);
  // Unset (absent or null) follows do_lower_case, as in transformers.
  if (config.json.contains("strip_accents") && !config.json.at("strip_accents").is_null()) {
    o.strip_accents = setting(config, "strip_accents", false);
  }
  o.tokenize_chinese_chars = setting(config, "tokenize_chinese_chars", true);
  return data::WordPieceTokenizer::from_file((fs::path(dir) / "vocab.txt").string(), o);
}

data::CharTokenizer load_char_tokenizer(const std::string& dir) {
  const TokenizerConfig config = read_tokenizer_config(dir);
  const std::string cls = class_of(config);
  HEED_CHECK(cls == "HeedCharTokenizer", "{}: tokenizer is {}, not heed's character tokenizer", dir,
             cls);
  return data::CharTokenizer::load(
      (fs::path(dir) / setting<std::string>(config, "file", "char_tokenizer.json")).string());
}

TruncationSettings load_truncation(const std::string& dir) {
  const TokenizerConfig config = read_tokenizer_config(dir);
  const nlohmann::json& j = config.json;
  const std::string& path = config.path;
  TruncationSettings t;
  if (auto it = j.find("model_max_length"); it != j.end() && it->is_number()) {
    const double n = it->get<double>();
    // Found by fuzz/json_files_fuzz.cpp: 0.1 passed "positive" and became a limit of 0.
    HEED_CHECK(n >= 1, "{}: model_max_length is {}; it must be at least 1", path, it->dump());
    if (n <= kLargestMaxLength) {
      HEED_CHECK(n == std::floor(n), "{}: model_max_length is {}; it must be a whole number", path,
                 it->dump());
      t.max_length = static_cast<int64_t>(n);
    }
  }
  if (auto it = j.find("heed_truncation"); it != j.end()) {
    const std::string given = it->is_string() ? it->get<std::string>() : "";
    const auto side = std::ranges::find(kTruncationNames, given,
                                        &std::pair<Truncation, std::string_view>::second);
    HEED_CHECK(side != kTruncationNames.end(),
               "{}: heed_truncation is {}; it must be head, tail or head_tail", path, it->dump());
    t.side = side->first;
  } else if (auto side = j.find("truncation_side"); side != j.end()) {
    HEED_CHECK(*side == "right" || *side == "left",
               "{}: truncation_side is {}; it must be right or left", path, side->dump());
    t.side = *side == "left" ? data::Truncation::kTail : data::Truncation::kHead;
  }
  return t;
}

}  // namespace heed::data
