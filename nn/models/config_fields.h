#pragma once
// How a model config describes its fields, once. Each config struct has
//   template <typename Self, typename Visitor> static void visit(Self& config, Visitor& v)
// that calls, in Hugging Face's order,
//   v.field("hidden_size", config.hidden_size, Field{.rule = AtLeast{1}});
// for every field of its config.json, and
//   v.divides("num_attention_heads", config.num_attention_heads, "hidden_size",
//   config.hidden_size);
// for its rules across fields. The config.json reader and writer (config_json.cpp), the run
// config's `model` section (train/config/config_schema.h), the run config's checks (which name
// the file and line) and Config::validate() are all visitors of that one description: a new
// field is one line.
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "base/error.h"
#include "nn/activation.h"

namespace heed::nn {

// BERT's position_embedding_type: learned, or the original Transformer's fixed table (heed's).
inline constexpr std::array<std::string_view, 4> kPositionEmbeddingNames{
    "absolute", "relative_key", "relative_key_query", "sinusoidal"};

namespace field {

struct Free {};  // any value of the type
struct AtLeast {
  int64_t min;
};
struct Positive {};     // > 0
struct Probability {};  // in [0, 1): a dropout rate (1 would zero everything)
struct OneOf {
  std::span<const std::string_view> names;
  std::string_view what;  // "activation"
};
// In [0, vocab_size). A run config's check holds every token id to it; a model's own check only
// the ids it looks up in its embeddings (pad, decoder start), not markers such as GPT-2's
// bos/eos, whose defaults (50256) outlive a smaller vocabulary harmlessly.
struct TokenId {
  bool looked_up = false;
};
using Rule = std::variant<Free, AtLeast, Positive, Probability, OneOf, TokenId>;

// Where a run gets the value: from its config (model.*), or from the tokenizer or the data
// unless model.* sets it (vocab_size, the special token ids, num_labels).
enum class Source { kConfig, kTokenizerOrData };

}  // namespace field

struct Field {
  field::Rule rule = field::Free{};
  field::Source source = field::Source::kConfig;
  bool written_to_json = true;  // false: derived in config.json (num_labels from id2label)
};

// Config::validate(): every rule of `Config`, with messages that name the config and field.
template <typename Config>
void check_config_fields(const Config& config, const char* config_name);

namespace detail {

// The checks of one rule on one value: empty when it holds, else what is wrong.
inline std::optional<std::string> broken_rule(const field::Rule& rule, int64_t value,
                                              int64_t vocab_size) {
  if (auto* r = std::get_if<field::AtLeast>(&rule); r && value < r->min) {
    return fmt::format("must be at least {}, got {}", r->min, value);
  }
  if (auto* r = std::get_if<field::TokenId>(&rule);
      r && r->looked_up && (value < 0 || value >= vocab_size)) {
    return fmt::format("{} is outside vocab_size {}", value, vocab_size);
  }
  return std::nullopt;
}
inline std::optional<std::string> broken_rule(const field::Rule& rule, double value, int64_t) {
  if (std::holds_alternative<field::Positive>(rule) && !(value > 0)) {
    return fmt::format("must be > 0, got {}", value);
  }
  if (std::holds_alternative<field::Probability>(rule) && !(value >= 0 && value < 1)) {
    return fmt::format("must be in [0, 1), got {}", value);
  }
  return std::nullopt;
}
inline std::optional<std::string> broken_rule(const field::Rule& rule, const std::string& value,
                                              int64_t) {
  if (auto* r = std::get_if<field::OneOf>(&rule)) {
    for (std::string_view name : r->names) {
      if (name == value) return std::nullopt;
    }
    return fmt::format("unknown {} '{}'", r->what, value);
  }
  return std::nullopt;
}
inline std::optional<std::string> broken_rule(const field::Rule& rule,
                                              const std::optional<double>& value, int64_t vocab) {
  return value ? broken_rule(rule, *value, vocab) : std::nullopt;
}
inline std::optional<std::string> broken_rule(const field::Rule& rule,
                                              const std::optional<int64_t>& value, int64_t vocab) {
  return value ? broken_rule(rule, *value, vocab) : std::nullopt;
}
inline std::optional<std::string> broken_rule(const field::Rule&, bool, int64_t) {
  return std::nullopt;
}

template <typename Config>
struct FieldChecker {
  const char* config_name;
  int64_t vocab_size;
  template <typename T>
  void field(const char* name, const T& value, const Field& f) {
    if (auto broken = broken_rule(f.rule, value, vocab_size)) {
      fail("{}: {} {}", config_name, name, *broken);
    }
  }
  void divides(const char* heads_name, int64_t heads, const char* size_name, int64_t size) {
    HEED_CHECK(heads > 0 && size % heads == 0, "{}: {} {} does not divide {} {}", config_name,
               heads_name, heads, size_name, size);
  }
};

}  // namespace detail

template <typename Config>
void check_config_fields(const Config& config, const char* config_name) {
  detail::FieldChecker<Config> checker{config_name, config.vocab_size};
  Config::visit(config, checker);
}

}  // namespace heed::nn
