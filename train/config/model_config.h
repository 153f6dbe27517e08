#pragma once
// The run config's `model` section: which architecture, its Hugging Face config, and the
// values that usually come from the tokenizer or the data.
#include <cstdint>
#include <optional>
#include <string_view>
#include <variant>

#include "base/error.h"
#include "nn/models/bert.h"
#include "nn/models/distilbert.h"
#include "nn/models/encoder_decoder.h"
#include "nn/models/gpt.h"
#include "nn/models/roberta.h"
#include "nn/models/t5.h"

namespace heed::train {

// The architectures, in the order of ArchConfig's alternatives (model.arch's YAML names are
// in config_schema.h).
enum class Arch { kBert, kGpt2, kBart, kRoberta, kDistilBert, kT5 };
std::string_view to_string(Arch value);

// The Hugging Face config of one architecture. A new architecture is one more alternative
// here and one more Arch value at the same place.
using ArchConfig = std::variant<nn::BertConfig, nn::GPT2Config, nn::BartConfig, nn::RobertaConfig,
                                nn::DistilBertConfig, nn::T5Config>;

struct ModelConfig {
  // Its alternative is model.arch; its tokenizer-derived fields (vocab_size, the special
  // token ids, num_labels) are NOT meaningful here: see the optionals below.
  ArchConfig config;
  // Values that usually come from the tokenizer (and, for num_labels, from the data's label
  // set). Unset: the trainer fills them in; set: the config wins (a mismatch is the
  // trainer's error to report).
  std::optional<int64_t> vocab_size;              // every arch
  std::optional<int64_t> pad_token_id;            // bert, roberta, distilbert, bart, t5
  std::optional<int64_t> bos_token_id;            // gpt2, bart
  std::optional<int64_t> eos_token_id;            // gpt2, bart, t5
  std::optional<int64_t> decoder_start_token_id;  // bart, t5
  std::optional<int64_t> num_labels;              // the encoders' classification heads

  Arch arch() const { return static_cast<Arch>(config.index()); }
  // Makes `arch` the architecture, its config at its defaults; nothing when it already is.
  void set_arch(Arch arch);

  // The config of the architecture C belongs to; asking for another is a programming error.
  template <typename C>
  C& as() {
    return *checked(std::get_if<C>(&config));
  }
  template <typename C>
  const C& as() const {
    return *checked(std::get_if<C>(&config));
  }

  // The optional above that stands for the architecture's field `name`.
  template <typename Self>
  static auto& derived(Self& m, std::string_view name) {
    if (name == "vocab_size") return m.vocab_size;
    if (name == "pad_token_id") return m.pad_token_id;
    if (name == "bos_token_id") return m.bos_token_id;
    if (name == "eos_token_id") return m.eos_token_id;
    if (name == "decoder_start_token_id") return m.decoder_start_token_id;
    if (name == "num_labels") return m.num_labels;
    fail(
        "model.{}: no run config key stands for it (a model config field marked "
        "kTokenizerOrData needs one in ModelConfig)",
        name);
  }

 private:
  template <typename P>
  P* checked(P* found) const {
    if (!found) fail("model.arch is {}: its config is not the one asked for", to_string(arch()));
    return found;
  }
};

// Calls fn with the config of the model's architecture (nn::BertConfig&, ...).
template <typename M, typename Fn>
decltype(auto) visit_arch(M& model, Fn&& fn) {
  return std::visit(std::forward<Fn>(fn), model.config);
}

}  // namespace heed::train
