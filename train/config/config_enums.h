#pragma once
// The YAML names of the config's enum values (`arch: gpt2`, `dtype: bf16`) and what each enum
// is called in messages; the schema's readers and writers look them up here.
#include <array>
#include <iterator>
#include <optional>
#include <string_view>
#include <utility>
#include <variant>

#include "base/dtype.h"
#include "data/char_tokenizer.h"
#include "data/wordpiece.h"
#include "train/config/config.h"

namespace heed::train {

// The YAML names of an enum's values, and what the enum is called in messages.
template <typename E>
struct EnumInfo;

#define HEED_ENUM_INFO(Type, what_name, ...)                             \
  template <>                                                            \
  struct EnumInfo<Type> {                                                \
    static constexpr std::string_view what = what_name;                  \
    static constexpr auto values =                                       \
        std::to_array<std::pair<Type, std::string_view>>({__VA_ARGS__}); \
  };

HEED_ENUM_INFO(Arch, "arch", {Arch::kBert, "bert"}, {Arch::kGpt2, "gpt2"}, {Arch::kBart, "bart"},
               {Arch::kRoberta, "roberta"}, {Arch::kDistilBert, "distilbert"}, {Arch::kT5, "t5"})
static_assert(std::size(EnumInfo<Arch>::values) == std::variant_size_v<ArchConfig>,
              "each model.arch value needs its config in ArchConfig, at the same place");
HEED_ENUM_INFO(TokenizerType, "tokenizer type", {TokenizerType::kWordPiece, "wordpiece"},
               {TokenizerType::kBpe, "bpe"}, {TokenizerType::kSentencePiece, "sentencepiece"},
               {TokenizerType::kChar, "char"})
HEED_ENUM_INFO(OptimizerName, "optimizer", {OptimizerName::kAdamW, "adamw"},
               {OptimizerName::kSgd, "sgd"}, {OptimizerName::kAdafactor, "adafactor"})
HEED_ENUM_INFO(ScheduleName, "schedule", {ScheduleName::kConstant, "constant"},
               {ScheduleName::kLinear, "linear"}, {ScheduleName::kCosine, "cosine"})
HEED_ENUM_INFO(Resume, "resume mode", {Resume::kNever, "never"}, {Resume::kAuto, "auto"})
HEED_ENUM_INFO(Progress, "progress mode", {Progress::kAuto, "auto"}, {Progress::kAlways, "always"},
               {Progress::kNever, "never"})
HEED_ENUM_INFO(DType, "dtype", {DType::f32, "f32"}, {DType::bf16, "bf16"})
HEED_ENUM_INFO(data::CharTokenizer::Unit, "tokenizer unit",
               {data::CharTokenizer::Unit::kCharacter, "character"},
               {data::CharTokenizer::Unit::kWhitespaceSymbol, "whitespace"})
#undef HEED_ENUM_INFO
template <>
struct EnumInfo<data::Truncation> {
  static constexpr std::string_view what = "truncation";
  static constexpr auto values = data::kTruncationNames;
};

// The YAML name of an enum value ("?" for a value without one).
template <typename E>
constexpr std::string_view enum_name(E value) {
  for (const auto& [v, name] : EnumInfo<E>::values) {
    if (v == value) return name;
  }
  return "?";
}

// The enum value of a YAML name; nullopt for an unknown name.
template <typename E>
constexpr std::optional<E> enum_from_name(std::string_view name) {
  for (const auto& [v, n] : EnumInfo<E>::values) {
    if (n == name) return v;
  }
  return std::nullopt;
}

}  // namespace heed::train
