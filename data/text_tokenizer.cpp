#include "data/text_tokenizer.h"

#include <cctype>
#include <filesystem>

#include "base/error.h"
#include "data/fingerprint.h"
#include "data/hf_tokenizer_json.h"
#include "data/tokenizer_io.h"

namespace heed::data {
namespace {

namespace fs = std::filesystem;

template <typename... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};
// clang before 17 deduces no aggregate's template arguments without a guide.
template <typename... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;

// A role's id, or an error naming the role that the tokenizer lacks.
int32_t required(std::optional<int32_t> id, std::string_view type, const char* role) {
  HEED_CHECK(id.has_value() && *id >= 0, "this {} tokenizer has no {} token", type, role);
  return *id;
}

std::optional<int32_t> present(int32_t id) {
  return id >= 0 ? std::optional(id) : std::nullopt;
}

}  // namespace

TextTokenizer TextTokenizer::load(const std::string& dir) {
  const std::string cls = tokenizer_class(dir);
  if (cls == "HeedCharTokenizer") return TextTokenizer(load_char_tokenizer(dir));
  if (cls == "BertTokenizer" || cls == "BertTokenizerFast")
    return TextTokenizer(load_wordpiece(dir));
  if (cls == "T5Tokenizer" || cls == "T5TokenizerFast")
    return TextTokenizer(load_sentencepiece(dir));
  if (cls == "PreTrainedTokenizerFast") {  // a directory with only tokenizer.json
    TokenizerJson json = read_tokenizer_json((fs::path(dir) / "tokenizer.json").string());
    if (json.wordpiece) return TextTokenizer(std::move(*json.wordpiece));
    return TextTokenizer(BpeTokenizer::from_tokenizer_json(json));
  }
  return TextTokenizer(BpeTokenizer::load(dir));
}

void TextTokenizer::save(const std::string& dir, int64_t max_length, Truncation truncation) const {
  std::visit(
      Overloaded{
          [&](const WordPieceTokenizer& t) { save_wordpiece(t, dir, max_length, truncation); },
          [&](const CharTokenizer& t) { save_char_tokenizer(t, dir); },
          [&](const BpeTokenizer& t) { t.save(dir, max_length, truncation); },
          [&](const SentencePieceTokenizer& t) { save_sentencepiece(t, dir, max_length); },
      },
      kind_);
}

std::string_view TextTokenizer::type_name() const {
  return std::visit(Overloaded{
                        [](const WordPieceTokenizer&) { return "wordpiece"; },
                        [](const CharTokenizer&) { return "char"; },
                        [](const BpeTokenizer&) { return "bpe"; },
                        [](const SentencePieceTokenizer&) { return "sentencepiece"; },
                    },
                    kind_);
}

int64_t TextTokenizer::vocab_size() const {
  return std::visit(Overloaded{
                        [](const BpeTokenizer& t) -> int64_t { return t.bpe().vocab_size(); },
                        [](const auto& t) -> int64_t { return t.vocab_size(); },
                    },
                    kind_);
}

std::vector<int32_t> TextTokenizer::encode(std::string_view text) const {
  return std::visit(Overloaded{
                        [&](const WordPieceTokenizer& t) { return t.encode_ids(text); },
                        [&](const auto& t) { return t.encode(text); },
                    },
                    kind_);
}

std::vector<int32_t> TextTokenizer::encode_corpus_line(std::string_view line) const {
  if (const auto* bpe = std::get_if<BpeTokenizer>(&kind_)) {
    std::string with_end(line);
    with_end.push_back('\n');
    return bpe->encode(with_end);
  }
  return encode(line);
}

std::vector<int32_t> TextTokenizer::encode_source(std::string_view text) const {
  return std::visit(Overloaded{
                        [&](const WordPieceTokenizer& t) { return t.encode(text).input_ids; },
                        [&](const CharTokenizer& t) { return t.encode(text); },
                        [&](const BpeTokenizer& t) { return t.encode_with_specials(text); },
                        [&](const SentencePieceTokenizer& t) {
                          std::vector<int32_t> ids = t.encode(text);
                          if (t.eos_id() >= 0) ids.push_back(t.eos_id());
                          return ids;
                        },
                    },
                    kind_);
}

std::vector<int32_t> TextTokenizer::encode_target(std::string_view text) const {
  if (const auto* chars = std::get_if<CharTokenizer>(&kind_)) return chars->encode_target(text);
  return encode(text);
}

std::string TextTokenizer::decode(std::span<const int32_t> ids) const {
  return std::visit(Overloaded{
                        [&](const SentencePieceTokenizer& t) {
                          std::vector<int32_t> kept;
                          for (int32_t id : ids)
                            if (!t.is_special(id) || id == t.unk_id()) kept.push_back(id);
                          return t.decode(kept);
                        },
                        [&](const auto& t) { return t.decode(ids); },
                    },
                    kind_);
}

std::string TextTokenizer::decode_source(std::span<const int32_t> ids) const {
  if (const auto* chars = std::get_if<CharTokenizer>(&kind_)) return chars->decode_source(ids);
  return decode(ids);
}

std::string TextTokenizer::token(int32_t id) const {
  return std::visit(Overloaded{
                        [&](const BpeTokenizer& t) { return t.bpe().token(id); },
                        [&](const SentencePieceTokenizer& t) { return t.token(id); },
                        [&](const auto& t) { return t.vocab().token(id); },
                    },
                    kind_);
}

int32_t TextTokenizer::pad_id() const {
  return std::visit(Overloaded{
                        [](const BpeTokenizer& t) {
                          return required(t.pad_id() ? t.pad_id() : t.eos_id(), "byte-level BPE",
                                          "pad or eos");
                        },
                        [](const SentencePieceTokenizer& t) {
                          return required(t.pad_id() >= 0 ? t.pad_id() : t.eos_id(),
                                          "SentencePiece", "pad or eos");
                        },
                        [](const auto& t) { return t.pad_id(); },
                    },
                    kind_);
}

int32_t TextTokenizer::start_id() const {
  return std::visit(
      Overloaded{
          [](const WordPieceTokenizer& t) { return t.cls_id(); },
          [](const CharTokenizer& t) { return t.bos_id(); },
          [](const BpeTokenizer& t) { return required(t.bos_id(), "byte-level BPE", "bos"); },
          [](const SentencePieceTokenizer& t) {
            return required(present(t.bos_id()), "SentencePiece", "bos");
          },
      },
      kind_);
}

int32_t TextTokenizer::end_id() const {
  return std::visit(
      Overloaded{
          [](const WordPieceTokenizer& t) { return t.sep_id(); },
          [](const CharTokenizer& t) { return t.eos_id(); },
          [](const BpeTokenizer& t) { return required(t.eos_id(), "byte-level BPE", "eos"); },
          [](const SentencePieceTokenizer& t) {
            return required(present(t.eos_id()), "SentencePiece", "eos");
          },
      },
      kind_);
}

bool TextTokenizer::is_special(int32_t id) const {
  return std::visit(Overloaded{
                        [&](const CharTokenizer& t) { return id >= 0 && id <= t.eos_id(); },
                        [&](const auto& t) { return t.is_special(id); },
                    },
                    kind_);
}

std::vector<int32_t> TextTokenizer::sentinel_ids() const {
  std::vector<int32_t> ids;
  if (const auto* pieces = std::get_if<SentencePieceTokenizer>(&kind_)) {
    for (int32_t k = 0; k < pieces->extra_ids(); ++k) ids.push_back(pieces->sentinel_id(k));
  }
  return ids;
}

uint64_t TextTokenizer::fingerprint() const {
  return std::visit(Overloaded{
                        [](const CharTokenizer& t) {
                          Fnv1a64 h;
                          h.update("char");
                          h.update_u64(t.vocab().fingerprint());
                          h.update_u64(static_cast<uint64_t>(t.unit()));
                          h.update_u64(static_cast<uint64_t>(t.target_unit()));
                          return h.value();
                        },
                        [](const auto& t) { return t.fingerprint(); },
                    },
                    kind_);
}

const WordPieceTokenizer& TextTokenizer::wordpiece(std::string_view who) const {
  const auto* wordpiece = std::get_if<WordPieceTokenizer>(&kind_);
  HEED_CHECK(wordpiece != nullptr, "{} needs a WordPiece tokenizer; this one is {}", who,
             std::holds_alternative<CharTokenizer>(kind_)  ? "a character tokenizer"
             : std::holds_alternative<BpeTokenizer>(kind_) ? "a byte-level BPE tokenizer"
                                                           : "a SentencePiece tokenizer");
  return *wordpiece;
}

namespace {

// The byte-level BPE of an encoder (RoBERTa's template), or an error naming what asked.
const BpeTokenizer& encoder_bpe(const BpeTokenizer& t) {
  HEED_CHECK(t.layout() == BpeTemplate::kRoberta && t.mask_id(),
             "this byte-level BPE is GPT-2's: an encoder needs RoBERTa's (<s> </s> <pad> <mask>)");
  return t;
}

[[noreturn]] void not_an_encoders(std::string_view type) {
  fail("a {} tokenizer serves no encoder (BERT's WordPiece or RoBERTa's byte-level BPE)", type);
}

}  // namespace

int32_t TextTokenizer::mask_id() const {
  if (const auto* w = std::get_if<WordPieceTokenizer>(&kind_)) return w->mask_id();
  if (const auto* b = std::get_if<BpeTokenizer>(&kind_)) return *encoder_bpe(*b).mask_id();
  not_an_encoders(type_name());
}

std::vector<int32_t> TextTokenizer::special_ids() const {
  if (const auto* w = std::get_if<WordPieceTokenizer>(&kind_)) return w->special_ids();
  if (const auto* b = std::get_if<BpeTokenizer>(&kind_)) return b->special_ids();
  not_an_encoders(type_name());
}

Encoding TextTokenizer::encode_inputs(std::string_view a, std::optional<std::string_view> b,
                                      size_t max_length, Truncation side) const {
  if (const auto* w = std::get_if<WordPieceTokenizer>(&kind_)) {
    return b ? w->encode_pair(a, *b, max_length, side) : w->encode(a, max_length, side);
  }
  std::optional<std::vector<int32_t>> second;
  if (b) second = encode(*b);
  return build_inputs(encode(a), std::move(second), max_length, side);
}

Encoding TextTokenizer::build_inputs(std::vector<int32_t> a, std::optional<std::vector<int32_t>> b,
                                     size_t max_length, Truncation side) const {
  if (const auto* w = std::get_if<WordPieceTokenizer>(&kind_)) {
    return w->build_inputs(std::move(a), std::move(b), max_length, side);
  }
  if (const auto* t = std::get_if<BpeTokenizer>(&kind_)) {
    return encoder_bpe(*t).build_inputs(std::move(a), std::move(b), max_length, side);
  }
  not_an_encoders(type_name());
}

std::vector<std::string> TextTokenizer::split_words(std::string_view text) const {
  if (const auto* w = std::get_if<WordPieceTokenizer>(&kind_)) return w->basic_tokenize(text);
  std::vector<std::string> words;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    const size_t start = i;
    while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i > start) words.emplace_back(text.substr(start, i - start));
  }
  return words;
}

void TextTokenizer::append_word_ids(std::string_view word, std::vector<int32_t>& out) const {
  if (const auto* w = std::get_if<WordPieceTokenizer>(&kind_)) {
    const std::vector<int32_t> ids = w->encode_ids(word);
    out.insert(out.end(), ids.begin(), ids.end());
    return;
  }
  if (const auto* b = std::get_if<BpeTokenizer>(&kind_)) {
    // Every word starts after a space, the first too (RoBERTa's add_prefix_space): its
    // pieces are then the same wherever it stands.
    const std::vector<int32_t> ids = encoder_bpe(*b).encode(" " + std::string(word));
    out.insert(out.end(), ids.begin(), ids.end());
    return;
  }
  not_an_encoders(type_name());
}

}  // namespace heed::data
