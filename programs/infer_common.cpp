#include "programs/infer_common.h"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "autograd/ops.h"
#include "base/error.h"
#include "data/tokenizer_io.h"
#include "io/json_file.h"
#include "nn/models/gpt.h"
#include "nn/pretrained_io.h"
#include "programs/infer_adapter.h"

namespace heed::infer {
namespace {

namespace fs = std::filesystem;

std::string join_or(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) out += i + 1 == names.size() ? " or " : ", ";
    out += names[i];
  }
  return out;
}

// The file of a model directory that holds its tokenizer's vocabulary.
std::string tokenizer_file(const std::string& dir) {
  const std::string cls = data::tokenizer_class(dir);
  const fs::path base(dir);
  if (cls.starts_with("Bert")) return (base / "vocab.txt").string();
  if (cls.starts_with("T5")) return (base / "spiece.model").string();
  if (cls != "HeedCharTokenizer") return (base / "vocab.json").string();
  const fs::path config = base / "tokenizer_config.json";
  return (base / io::read_json_file(config.string()).value("file", "char_tokenizer.json")).string();
}

// The model predicts ids of its own vocabulary and the tokenizer turns them into text: with
// fewer tokens than the model, output would stop at the first id past the tokenizer's end;
// with more, an input could hold ids the model has no embedding for.
void check_same_vocabulary(const std::string& dir, const nlohmann::json& config,
                           const data::TextTokenizer& tokenizer) {
  const auto it = config.find("vocab_size");
  if (it == config.end() || !it->is_number_integer()) return;  // from_pretrained says what's wrong
  const int64_t model_size = it->get<int64_t>();
  HEED_CHECK(tokenizer.vocab_size() == model_size,
             "{} has {} tokens, but {} gives vocab_size {}: the tokenizer and the model must have "
             "the same vocabulary (files from two different models?)",
             tokenizer_file(dir), tokenizer.vocab_size(), (fs::path(dir) / "config.json").string(),
             model_size);
}

}  // namespace

Checkpoint load_checkpoint(const CommonArgs& args, const std::string& command,
                           const std::vector<std::string>& architectures) {
  const std::string& dir = args.checkpoint;
  HEED_CHECK(fs::exists(dir), "checkpoint {} does not exist", dir);
  HEED_CHECK(fs::is_directory(dir), "checkpoint {} is not a directory", dir);
  const std::string adapter = adapter_directory(args);
  const nlohmann::json config = nn::read_model_config(model_config_directory(args));
  const std::string arch = nn::declared_architecture(config);
  HEED_CHECK(std::find(architectures.begin(), architectures.end(), arch) != architectures.end(),
             "checkpoint {} is a {}; {} needs a {}", model_config_directory(args), arch, command,
             join_or(architectures));
  data::TextTokenizer tokenizer = data::TextTokenizer::load(dir);
  check_same_vocabulary(dir, config, tokenizer);
  Checkpoint c{dir, adapter.empty() ? nn::from_pretrained(dir) : with_adapter(args, config),
               std::move(tokenizer)};
  c.model->eval();
  return c;
}

void check_top_k(int64_t top_k, const Checkpoint& c) {
  HEED_CHECK(top_k <= c.tokenizer.vocab_size(),
             "--top-k: must be at most the vocabulary size, {} (checkpoint {}), got {}",
             c.tokenizer.vocab_size(), c.dir, top_k);
}

void note_context_full(const std::string& command, size_t text_index, size_t num_texts,
                       size_t new_tokens, int64_t positions, const std::string& field) {
  const std::string which = num_texts > 1 ? fmt::format(" text {}:", text_index + 1) : "";
  std::fprintf(stderr,
               "infer %s:%s stopped after %zu new tokens: the model's context of %lld positions "
               "(%s) is full\n",
               command.c_str(), which.c_str(), new_tokens, static_cast<long long>(positions),
               field.c_str());
}

std::vector<std::string> input_texts(const std::string& text, const std::string& what) {
  if (text != "-") {
    HEED_CHECK(text.find_first_not_of(" \t\r\n") != std::string::npos, "empty {}", what);
    return {text};
  }
  std::vector<std::string> texts;
  std::string line;
  while (std::getline(std::cin, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    HEED_CHECK(line.find_first_not_of(" \t") != std::string::npos, "stdin:{}: empty {}",
               texts.size() + 1, what);
    texts.push_back(line);
  }
  HEED_CHECK(!texts.empty(), "no {} on stdin", what);
  return texts;
}

void check_length(size_t n, int64_t limit, const std::string& what, const std::string& field) {
  HEED_CHECK(static_cast<int64_t>(n) <= limit, "{} is {} tokens; the model takes at most {} ({})",
             what, n, limit, field);
}

void check_encoder_length(size_t n, const nn::BertBase& model) {
  const nn::BertConfig& config = model.config;
  const bool roberta = model.bert->layout.positions == nn::PositionIds::kAfterPadding;
  check_length(n, config.max_position_embeddings - (roberta ? config.pad_token_id + 1 : 0), "text",
               roberta ? "max_position_embeddings - pad_token_id - 1" : "max_position_embeddings");
}

nn::ModelInputs encoder_inputs(const data::Encoding& enc) {
  nn::ModelInputs in;
  in.input_ids = ids_row(enc.input_ids);
  in.attention_mask = ones(in.input_ids.shape(), DType::i64);
  in.token_type_ids = enc.token_type_ids.empty() ? zeros(in.input_ids.shape(), DType::i64)
                                                 : ids_row(enc.token_type_ids);
  return in;
}

std::string fixed4(double x) {
  return fmt::format("{:.4f}", x);
}

std::vector<int32_t> with_bos(const nn::GPT& model, std::vector<int32_t> ids) {
  const int64_t bos = model.config.bos_token_id;
  HEED_CHECK(bos >= 0 && bos < model.config.vocab_size,
             "config.json: bos_token_id {} is outside the vocabulary of {} tokens", bos,
             model.config.vocab_size);
  ids.insert(ids.begin(), static_cast<int32_t>(bos));
  return ids;
}

Tensor ids_row(const std::vector<int32_t>& ids) {
  return from_vector(std::vector<int64_t>(ids.begin(), ids.end()),
                     {1, static_cast<int64_t>(ids.size())});
}

nlohmann::json tokens_json(const data::TextTokenizer& tok, const std::vector<int32_t>& ids,
                           const std::vector<double>& log_probs) {
  nlohmann::json tokens = nlohmann::json::array();
  for (size_t i = 0; i < ids.size(); ++i) {
    tokens.push_back({{"token", tok.token(ids[i])}, {"id", ids[i]}, {"log_prob", log_probs[i]}});
  }
  return tokens;
}

void write_score(std::ostream& out, bool json, nlohmann::json fields,
                 const data::TextTokenizer& tok, const std::vector<int32_t>& ids,
                 const decode::ScoreResult& s, bool first) {
  if (json) {
    fields["tokens"] = tokens_json(tok, ids, s.log_probs);
    fields["total_log_prob"] = s.total_log_prob;
    fields["num_tokens"] = s.log_probs.size();
    fields["perplexity"] = s.perplexity;
    out << fields.dump() << "\n";
    return;
  }
  if (!first) out << "\n";
  for (size_t i = 0; i < ids.size(); ++i)
    out << tok.token(ids[i]) << "\t" << ids[i] << "\t" << fixed4(s.log_probs[i]) << "\n";
  out << "perplexity: " << fixed4(s.perplexity) << " (" << s.log_probs.size()
      << " tokens, total log-prob " << fixed4(s.total_log_prob) << ")\n";
}

}  // namespace heed::infer
