#include "train/tokenizer_io.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "autograd/error.h"

namespace heed::train {
namespace {

namespace fs = std::filesystem;

void write_json(const fs::path& path, const nlohmann::json& j) {
  std::ofstream out(path);
  out << j.dump(2) << "\n";
  HEED_CHECK(out.good(), "cannot write {}", path.string());
}

nlohmann::json read_tokenizer_config(const std::string& dir) {
  const fs::path path = fs::path(dir) / "tokenizer_config.json";
  if (!fs::exists(path)) {
    // A Hugging Face BERT directory may carry only vocab.txt: BertTokenizer, lower-cased.
    HEED_CHECK(fs::exists(fs::path(dir) / "vocab.txt"),
               "{}: no tokenizer (neither tokenizer_config.json nor vocab.txt)", dir);
    return {{"tokenizer_class", "BertTokenizer"}, {"do_lower_case", true}};
  }
  std::ifstream in(path);
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    fail("{}: not valid JSON: {}", path.string(), e.what());
  }
}

}  // namespace

void save_wordpiece(const data::WordPieceTokenizer& tokenizer, const std::string& dir,
                    int64_t model_max_length) {
  fs::create_directories(dir);
  tokenizer.vocab().save((fs::path(dir) / "vocab.txt").string());
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
  write_json(fs::path(dir) / "tokenizer_config.json", j);
}

void save_char_tokenizer(const data::CharTokenizer& tokenizer, const std::string& dir) {
  fs::create_directories(dir);
  tokenizer.save((fs::path(dir) / "char_tokenizer.json").string());
  write_json(fs::path(dir) / "tokenizer_config.json",
             {{"tokenizer_class", "HeedCharTokenizer"}, {"file", "char_tokenizer.json"}});
}

std::string tokenizer_class(const std::string& dir) {
  return read_tokenizer_config(dir).value("tokenizer_class", "BertTokenizer");
}

data::WordPieceTokenizer load_wordpiece(const std::string& dir) {
  nlohmann::json j = read_tokenizer_config(dir);
  HEED_CHECK(j.value("tokenizer_class", "BertTokenizer") == "BertTokenizer",
             "{}: tokenizer is {}, not a WordPiece (BertTokenizer)", dir,
             j.value("tokenizer_class", ""));
  data::WordPieceOptions o;
  o.lowercase = j.value("do_lower_case", true);
  if (auto it = j.find("strip_accents"); it != j.end() && it->is_boolean()) {
    o.strip_accents = it->get<bool>();
  }
  o.tokenize_chinese_chars = j.value("tokenize_chinese_chars", true);
  return data::WordPieceTokenizer::from_file((fs::path(dir) / "vocab.txt").string(), o);
}

data::CharTokenizer load_char_tokenizer(const std::string& dir) {
  nlohmann::json j = read_tokenizer_config(dir);
  HEED_CHECK(j.value("tokenizer_class", "") == "HeedCharTokenizer",
             "{}: tokenizer is {}, not heed's character tokenizer", dir,
             j.value("tokenizer_class", ""));
  return data::CharTokenizer::load(
      (fs::path(dir) / j.value("file", "char_tokenizer.json")).string());
}

}  // namespace heed::train
