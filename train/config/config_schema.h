#pragma once
// The config's schema, written once: which keys each section has, in which order, and which
// field of RunConfig each one fills. Reading YAML, writing YAML and listing the keys are
// three visitors over these functions, so the three can never disagree.
//
// A visitor V provides
//   v.field(key, value, need)   for a leaf (value: int64_t, double, bool, std::string, an
//                               enum of EnumInfo, std::array<double, 2>, a vector of
//                               strings, or an optional of these)
//   v.section(key, body)        for a nested mapping; body() visits its keys
// C is RunConfig or const RunConfig, so one schema serves readers and writers.
#include <array>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "train/config/config.h"

namespace heed::train {

enum class Need {
  kOptional,       // absent: the default
  kRequired,       // absent: an error, reported after the section's unknown keys
  kRequiredFirst,  // absent: an error at once (the rest of the section depends on it)
};

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

HEED_ENUM_INFO(Task, "task", {Task::kMlm, "mlm"}, {Task::kClm, "clm"}, {Task::kSeq2Seq, "seq2seq"},
               {Task::kClassification, "classification"},
               {Task::kTokenClassification, "token_classification"})
HEED_ENUM_INFO(Arch, "arch", {Arch::kBert, "bert"}, {Arch::kGpt2, "gpt2"}, {Arch::kBart, "bart"})
HEED_ENUM_INFO(TokenizerType, "tokenizer type", {TokenizerType::kWordPiece, "wordpiece"},
               {TokenizerType::kBpe, "bpe"}, {TokenizerType::kSentencePiece, "sentencepiece"},
               {TokenizerType::kChar, "char"})
HEED_ENUM_INFO(OptimizerName, "optimizer", {OptimizerName::kAdamW, "adamw"},
               {OptimizerName::kSgd, "sgd"})
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

// The model's keys: the fields of its architecture's config (nn/models/config_fields.h), those
// that the tokenizer or the data fill in kept in ModelConfig's optionals.
template <typename V, typename M>
struct ModelKeys {
  V& v;
  M& m;
  template <typename T>
  void field(const char* name, T& value, const nn::Field& f) {
    if (f.source == nn::field::Source::kTokenizerOrData) {
      v.field(name, ModelConfig::derived(m, name));
    } else {
      v.field(name, value);
    }
  }
  void divides(const char*, int64_t, const char*, int64_t) {}
};

// The model's keys are those of its architecture's Hugging Face config, so `arch` comes
// first and decides the rest.
template <typename V, typename M>
void visit_model(V& v, M& m) {
  v.field("arch", m.arch, Need::kRequiredFirst);
  ModelKeys<V, M> keys{v, m};
  switch (m.arch) {
    case Arch::kBert:
      return nn::BertConfig::visit(m.bert, keys);
    case Arch::kGpt2:
      return nn::GPT2Config::visit(m.gpt2, keys);
    case Arch::kBart:
      return nn::BartConfig::visit(m.bart, keys);
  }
}

template <typename V, typename C>
void visit_config(V& v, C& c) {
  v.field("task", c.task, Need::kRequired);
  v.section("model", [&] { visit_model(v, c.model); });
  v.field("init_from", c.init_from);
  v.section("tokenizer", [&] {
    auto& t = c.tokenizer;
    v.field("type", t.type);
    v.field("vocab", t.vocab);
    v.field("vocab_size", t.vocab_size);
    v.field("lowercase", t.lowercase);
    v.field("strip_accents", t.strip_accents);
    v.field("min_frequency", t.min_frequency);
    v.field("model_type", t.model_type);
    v.field("unit", t.unit);
    v.field("target_unit", t.target_unit);
  });
  v.section("data", [&] {
    auto& d = c.data;
    v.field("train", d.train, Need::kRequired);
    v.field("valid", d.valid);
    v.field("test", d.test);
    v.field("max_seq_length", d.max_seq_length);
    v.field("truncation", d.truncation);
    v.field("mlm_probability", d.mlm_probability);
    v.field("mask_replace_prob", d.mask_replace_prob);
    v.field("random_replace_prob", d.random_replace_prob);
    v.field("labels", d.labels);
    v.field("max_source_length", d.max_source_length);
    v.field("max_target_length", d.max_target_length);
    v.field("max_train_samples", d.max_train_samples);
    v.field("shuffle", d.shuffle);
    v.field("group_by_length", d.group_by_length);
    v.field("prefetch", d.prefetch);
  });
  v.section("optim", [&] {
    auto& o = c.optim;
    v.field("name", o.name);
    v.field("lr", o.lr);
    v.field("betas", o.betas);
    v.field("eps", o.eps);
    v.field("weight_decay", o.weight_decay);
    v.field("momentum", o.momentum);
  });
  v.section("schedule", [&] {
    v.field("name", c.schedule.name);
    v.field("warmup_steps", c.schedule.warmup_steps);
  });
  v.section("train", [&] {
    auto& t = c.train;
    v.field("batch_size", t.batch_size);
    v.field("grad_accum_steps", t.grad_accum_steps);
    v.field("max_steps", t.max_steps, Need::kRequired);
    v.field("max_grad_norm", t.max_grad_norm);
    v.field("label_smoothing", t.label_smoothing);
    v.field("seed", t.seed);
    v.field("threads", t.threads);
    v.field("output_dir", t.output_dir, Need::kRequired);
    v.field("resume", t.resume);
    v.field("overwrite_output_dir", t.overwrite_output_dir);
    v.field("eval_at_end", t.eval_at_end);
    v.field("dtype", t.dtype);
    v.field("check_memory", t.check_memory);
    v.field("bucket_mb", t.bucket_mb);
    v.field("zero_stage", t.zero_stage);
  });
  v.section("eval", [&] {
    v.field("every_steps", c.eval.every_steps);
    v.field("max_batches", c.eval.max_batches);
    v.field("batch_size", c.eval.batch_size);
    v.field("decode", c.eval.decode);
    v.field("load_best_model_at_end", c.eval.load_best_model_at_end);
    v.field("metric_for_best_model", c.eval.metric_for_best_model);
    v.field("greater_is_better", c.eval.greater_is_better);
  });
  v.section("checkpoint", [&] {
    v.field("every_steps", c.checkpoint.every_steps);
    v.field("keep_last", c.checkpoint.keep_last);
  });
  v.section("logging", [&] {
    v.field("every_steps", c.logging.every_steps);
    v.field("progress", c.logging.progress);
  });
  v.section("generation", [&] {
    v.field("num_beams", c.generation.num_beams);
    v.field("max_new_tokens", c.generation.max_new_tokens);
  });
}

// Every dotted key of a config whose model is `arch`, in schema order (sections included).
std::vector<std::string> config_keys(Arch arch);

}  // namespace heed::train
