#include "data/sentencepiece_tokenizer.h"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <algorithm>
#include <filesystem>
#include <mutex>
#include <unordered_map>

#include "base/error.h"
#include "data/fingerprint.h"
#include "data/spiece_model_check.h"
#include "io/text_file.h"

namespace heed::data {

struct SentencePieceTokenizer::Impl {
  sentencepiece::SentencePieceProcessor processor;
  std::string serialized;
};

namespace {

// The library's reason on one line (its messages name the failing check, sometimes with a
// protobuf dump after a newline), so that programs can print the error as one line.
std::string reason(const sentencepiece::util::Status& status) {
  std::string text = status.ToString();
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

std::string join_symbols(const SentencePieceTrainOptions& options) {
  std::string joined;
  for (const std::string& symbol : options.user_defined_symbols) {
    HEED_CHECK(!symbol.empty() && symbol.find(',') == std::string::npos,
               "SentencePiece training on {}: user_defined_symbols entry '{}' cannot be passed "
               "(the library takes a comma-separated list, so it must be non-empty and "
               "comma-free)",
               options.input, symbol);
    if (!joined.empty()) joined += ',';
    joined += symbol;
  }
  return joined;
}

std::unordered_map<std::string, std::string> trainer_arguments(
    const SentencePieceTrainOptions& options) {
  return {
      {"input", options.input},
      {"model_prefix", options.model_prefix},
      {"model_type", options.model_type},
      {"vocab_size", std::to_string(options.vocab_size)},
      // fmt gives the shortest text that reads back as the same double.
      {"character_coverage", fmt::format("{}", options.character_coverage)},
      {"user_defined_symbols", join_symbols(options)},
      {"pad_id", std::to_string(options.pad_id)},
      {"unk_id", std::to_string(options.unk_id)},
      {"bos_id", std::to_string(options.bos_id)},
      {"eos_id", std::to_string(options.eos_id)},
      {"num_threads", std::to_string(options.num_threads)},
      // The log level is the library's global state: it is set on every call so that one
      // training's choice does not leak into the next.
      {"minloglevel", options.log_progress ? "0" : "1"},
  };
}

std::string describe(const std::unordered_map<std::string, std::string>& arguments) {
  std::string text;
  for (const char* key : {"model_type", "vocab_size", "character_coverage", "user_defined_symbols",
                          "pad_id", "unk_id", "bos_id", "eos_id"}) {
    if (!text.empty()) text += ' ';
    text += fmt::format("{}={}", key, arguments.at(key));
  }
  return text;
}

}  // namespace

SentencePieceTokenizer SentencePieceTokenizer::load(const std::string& spiece_model) {
  // The library throws std::ios_failure out of Load on a directory (uncaught, it aborts).
  HEED_CHECK(!std::filesystem::is_directory(spiece_model),
             "{}: is a directory, not a SentencePiece model (spiece.model)", spiece_model);
  const std::string bytes = io::read_text_file(spiece_model);
  if (const std::optional<std::string> problem = unloadable_piece(bytes)) {
    fail("{}: cannot load as a SentencePiece model: {}", spiece_model, *problem);
  }
  auto impl = std::make_shared<Impl>();
  const auto status = impl->processor.LoadFromSerializedProto(bytes);
  HEED_CHECK(status.ok(), "{}: cannot load as a SentencePiece model: {}", spiece_model,
             reason(status));
  SentencePieceTokenizer tokenizer;
  impl->serialized = bytes;
  tokenizer.impl_ = std::move(impl);
  tokenizer.source_ = spiece_model;
  return tokenizer;
}

void SentencePieceTokenizer::train(const SentencePieceTrainOptions& options) {
  HEED_CHECK(
      options.model_type == "unigram" || options.model_type == "bpe",
      "SentencePiece training on {}: model_type '{}' is not one heed trains (unigram or bpe)",
      options.input, options.model_type);
  HEED_CHECK(!options.model_prefix.empty(),
             "SentencePiece training on {}: model_prefix is empty (where should the model go?)",
             options.input);
  const auto arguments = trainer_arguments(options);
  // The seed and the log level are the library's globals: two trainings at once would race
  // for them.
  static std::mutex training;
  const std::lock_guard<std::mutex> lock(training);
  sentencepiece::SetRandomGeneratorSeed(options.seed);
  const auto status = sentencepiece::SentencePieceTrainer::Train(arguments);
  HEED_CHECK(status.ok(), "SentencePiece training on {} ({}) failed: {}", options.input,
             describe(arguments), reason(status));
}

SentencePieceTokenizer SentencePieceTokenizer::with_extra_ids(int32_t count) const {
  HEED_CHECK(count >= 0 && count <= kMaxExtraIds,
             "{}: {} sentinels (extra_ids) asked for; heed takes 0 to {}", source_, count,
             kMaxExtraIds);
  SentencePieceTokenizer tokenizer = *this;
  tokenizer.extra_ids_ = count;
  auto names = std::make_shared<std::vector<std::string>>();
  for (int32_t k = 0; k < count; ++k) names->push_back(fmt::format("<extra_id_{}>", k));
  tokenizer.sentinel_names_ = std::move(names);
  return tokenizer;
}

int32_t SentencePieceTokenizer::sentinel_id(int32_t k) const {
  HEED_CHECK(k >= 0 && k < extra_ids_, "{}: no sentinel <extra_id_{}> (the tokenizer has {})",
             source_, k, extra_ids_);
  return vocab_size() - 1 - k;
}

std::optional<std::pair<int32_t, size_t>> SentencePieceTokenizer::sentinel_at(
    std::string_view text) const {
  constexpr std::string_view kPrefix = "<extra_id_";
  if (extra_ids_ == 0 || !text.starts_with(kPrefix)) return std::nullopt;
  size_t end = kPrefix.size();
  int64_t k = 0;
  while (end < text.size() && end < kPrefix.size() + 4 && text[end] >= '0' && text[end] <= '9')
    k = k * 10 + (text[end++] - '0');
  // "<extra_id_07>" is not a sentinel's spelling, nor is one past the last.
  const size_t digits = end - kPrefix.size();
  if (digits == 0 || (digits > 1 && text[kPrefix.size()] == '0') || end >= text.size() ||
      text[end] != '>' || k >= extra_ids_)
    return std::nullopt;
  return std::pair{static_cast<int32_t>(k), end + 1};
}

std::vector<int32_t> SentencePieceTokenizer::encode(std::string_view text) const {
  if (extra_ids_ == 0) return encode_pieces(text);
  // Sentinels split the text; each part is encoded on its own, without the white space that
  // touches a sentinel (T5Tokenizer's added tokens strip both sides).
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  std::vector<int32_t> ids;
  const auto flush = [&](std::string_view part) {
    while (!part.empty() && is_space(part.front())) part.remove_prefix(1);
    while (!part.empty() && is_space(part.back())) part.remove_suffix(1);
    if (part.empty()) return;
    const std::vector<int32_t> piece_ids = encode_pieces(part);
    ids.insert(ids.end(), piece_ids.begin(), piece_ids.end());
  };
  size_t part_begin = 0;
  for (size_t i = text.find('<'); i != std::string_view::npos; i = text.find('<', i + 1)) {
    const auto sentinel = sentinel_at(text.substr(i));
    if (!sentinel) continue;
    flush(text.substr(part_begin, i - part_begin));
    ids.push_back(sentinel_id(sentinel->first));
    part_begin = i + sentinel->second;
    i = part_begin - 1;
  }
  flush(text.substr(part_begin));
  return ids;
}

std::vector<int32_t> SentencePieceTokenizer::encode_pieces(std::string_view text) const {
  std::vector<int> ids;
  const auto status = impl_->processor.Encode(text, &ids);
  HEED_CHECK(status.ok(), "{}: SentencePiece cannot encode a text of {} bytes: {}", source_,
             text.size(), reason(status));
  return std::vector<int32_t>(ids.begin(), ids.end());
}

std::string SentencePieceTokenizer::decode(std::span<const int32_t> ids) const {
  // The library does not check ids before looking their pieces up.
  for (int32_t id : ids) check_id(id);
  // A sentinel stands apart, one space on each side, between the texts of the parts.
  std::string text;
  const auto append = [&text](std::string_view part) {
    if (part.empty()) return;
    if (!text.empty()) text += ' ';
    text += part;
  };
  size_t begin = 0;
  for (size_t i = 0; i <= ids.size(); ++i) {
    if (i < ids.size() && !is_sentinel(ids[i])) continue;
    append(decode_pieces(ids.subspan(begin, i - begin)));
    if (i < ids.size()) append(token(ids[i]));
    begin = i + 1;
  }
  return text;
}

std::string SentencePieceTokenizer::decode_pieces(std::span<const int32_t> ids) const {
  std::string text;
  if (ids.empty()) return text;
  const auto status = impl_->processor.Decode(std::vector<int>(ids.begin(), ids.end()), &text);
  HEED_CHECK(status.ok(), "{}: SentencePiece cannot decode {} ids: {}", source_, ids.size(),
             reason(status));
  return text;
}

const std::string& SentencePieceTokenizer::token(int32_t id) const {
  check_id(id);
  if (is_sentinel(id)) return (*sentinel_names_)[static_cast<size_t>(vocab_size() - 1 - id)];
  return impl_->processor.IdToPiece(id);
}

std::optional<int32_t> SentencePieceTokenizer::id(std::string_view piece) const {
  if (const auto sentinel = sentinel_at(piece); sentinel && sentinel->second == piece.size())
    return sentinel_id(sentinel->first);
  const int found = impl_->processor.PieceToId(piece);
  // PieceToId answers unk_id for a piece the model lacks; only the unknown piece itself
  // really has that id.
  if (found < 0 || impl_->processor.IdToPiece(found) != piece) return std::nullopt;
  return found;
}

int32_t SentencePieceTokenizer::vocab_size() const {
  return piece_count() + extra_ids_;
}
int32_t SentencePieceTokenizer::piece_count() const {
  return impl_->processor.GetPieceSize();
}
int32_t SentencePieceTokenizer::pad_id() const {
  return impl_->processor.pad_id();
}
int32_t SentencePieceTokenizer::unk_id() const {
  return impl_->processor.unk_id();
}
int32_t SentencePieceTokenizer::bos_id() const {
  return impl_->processor.bos_id();
}
int32_t SentencePieceTokenizer::eos_id() const {
  return impl_->processor.eos_id();
}

bool SentencePieceTokenizer::is_special(int32_t id) const {
  check_id(id);
  return is_sentinel(id) || impl_->processor.IsControl(id) || impl_->processor.IsUnknown(id);
}

const std::string& SentencePieceTokenizer::serialized() const {
  return impl_->serialized;
}

uint64_t SentencePieceTokenizer::fingerprint() const {
  Fnv1a64 h;
  h.update("sentencepiece");
  h.update(impl_->serialized);
  // Without sentinels the fingerprint is the model's alone, as before they existed.
  if (extra_ids_ > 0) h.update(fmt::format("extra_ids {}", extra_ids_));
  return h.value();
}

void SentencePieceTokenizer::check_id(int32_t id) const {
  HEED_CHECK(id >= 0 && id < vocab_size(),
             "{}: token id {} is outside the SentencePiece vocabulary (size {})", source_, id,
             vocab_size());
}

}  // namespace heed::data
