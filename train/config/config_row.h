#pragma once
// What the config schema says of one key besides its type and default: its doc, what a
// resumed run does with a change, the rule its value must keep, and whether it is required.
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <variant>

namespace heed::train {

enum class Need {
  kOptional,       // absent: the default
  kRequired,       // absent: an error, reported after the section's unknown keys
  kRequiredFirst,  // absent: an error at once (the rest of the section depends on it)
};

// What a resumed run does with a key whose value differs from its checkpoint's
// run_config.yaml, and whether the key is part of what a finished run made (its model,
// metrics and examples), which a pipeline's finished stage is compared on.
enum class OnResume {
  kFixed,           // shaped what the run has learnt so far: a resumed run refuses a change
  kApplies,         // steers only the rest of the run: a resumed run takes the new value
  kAppliesNotMade,  // as kApplies, and no part of what the run made (where, how fast, logging)
  kHowStarted,      // how this part of the run was started: never a change
};

// The check of one key's value on its own (checks of one key against another are functions in
// config_validate.cpp). Each names the message it fails with; an unset optional passes.
namespace rule {
struct None {};
struct AtLeast {  // integers: "must be at least {min}", then "must be at most {max}"
  int64_t min = 0;
  int64_t max = std::numeric_limits<int64_t>::max();
};
struct Positive {  // "must be > 0", then "must be at most {max}"
  double max = std::numeric_limits<double>::infinity();
};
struct NonNegative {};  // "must be >= 0"
struct UnitInterval {   // "must be in [0, 1)" with the ends as given
  bool low_open = false;
  bool high_open = true;
};
struct EachInUnitInterval {};  // a pair: "each must be in [0, 1)"
struct DistinctNames {};       // a list: at least one name, none twice
struct IntIs {                 // `message` formats the value
  bool (*ok)(int64_t);
  std::string_view message;
};
struct TextIs {
  bool (*ok)(const std::string&);
  std::string_view message;
};
}  // namespace rule
using Rule =
    std::variant<rule::None, rule::AtLeast, rule::Positive, rule::NonNegative, rule::UnitInterval,
                 rule::EachInUnitInterval, rule::DistinctNames, rule::IntIs, rule::TextIs>;

// Everything the schema says about one key besides its type (the field's) and its default (the
// value of a default RunConfig).
struct Row {
  std::string_view doc;  // one line of configs/README.md (markdown)
  OnResume resume = OnResume::kFixed;
  Rule rule = rule::None{};
  Need need = Need::kOptional;
  std::string_view type = {};  // the documented type when the field's says too little ("path")
  // Made when the docs are: the part of `doc` that others fill in (the registered tasks).
  std::string (*doc_tail)() = nullptr;
};

inline bool is_sentencepiece_model_type(const std::string& name) {
  return name == "unigram" || name == "bpe";
}
inline bool is_not_empty(const std::string& text) {
  return !text.empty();
}
inline bool is_lora_bias(const std::string& bias) {
  return bias == "none";
}
inline bool is_zero_stage(int64_t stage) {
  return stage == 0 || stage == 1;
}

}  // namespace heed::train
