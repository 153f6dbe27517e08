// The checks of a RunConfig that do not depend on its task (those are TrainingTask::check):
// each key's row, and the checks of one key against another. Each failure is one line naming
// where the key was set.
#include <algorithm>
#include <limits>
#include <set>

#include "train/config/config_check.h"
#include "train/config/config_schema.h"

namespace heed::train {
namespace {

// The rules of the architecture's config (nn/models/config_fields.h) on model.*, where a
// field the tokenizer fills in is checked when the config sets it.
struct ModelChecks {
  Checker& c;
  const ModelConfig& m;

  template <typename T>
  void field(const char* name, const T& value, const nn::Field& f) {
    const std::string key = std::string("model.") + name;
    if (f.source == nn::field::Source::kTokenizerOrData) {
      check(key, ModelConfig::derived(m, name), f.rule);
    } else {
      check(key, value, f.rule);
    }
  }
  void divides(const char* heads_name, int64_t heads, const char* size_name, int64_t size) {
    c.divides(std::string("model.") + heads_name, heads, std::string("model.") + size_name, size);
  }

 private:
  void check(const std::string& key, const std::optional<int64_t>& value,
             const nn::field::Rule& rule) {
    if (auto* r = std::get_if<nn::field::AtLeast>(&rule)) c.at_least(key, value, r->min);
    if (std::holds_alternative<nn::field::TokenId>(rule)) c.token_id(key, value, m.vocab_size);
  }
  void check(const std::string& key, int64_t value, const nn::field::Rule& rule) {
    check(key, std::optional<int64_t>(value), rule);
  }
  void check(const std::string& key, double value, const nn::field::Rule& rule) {
    if (std::holds_alternative<nn::field::Positive>(rule)) c.positive(key, value);
    if (std::holds_alternative<nn::field::Probability>(rule)) c.unit_interval(key, value);
  }
  void check(const std::string& key, const std::optional<double>& value,
             const nn::field::Rule& rule) {
    if (value) check(key, *value, rule);
  }
  void check(const std::string& key, const std::string& value, const nn::field::Rule& rule) {
    if (auto* r = std::get_if<nn::field::OneOf>(&rule)) {
      c.one_of(key, value, std::vector<std::string>(r->names.begin(), r->names.end()), r->what);
    }
  }
  void check(const std::string&, bool, const nn::field::Rule&) {}
};

// The rule of each key's schema row (model.* has the architecture's rules, check_model).
struct RowChecks {
  Checker& c;
  std::string prefix;

  template <typename T>
  void field(std::string_view key, const T& value, const Row& row) {
    const std::string dotted = prefix + std::string(key);
    std::visit([&](const auto& rule) { check(dotted, value, rule); }, row.rule);
  }
  template <typename Body>
  void section(std::string_view key, Body&& body) {
    if (key == "model") return;
    prefix = std::string(key) + ".";
    body();
    prefix.clear();
  }

 private:
  template <typename T, typename R>
  void check(const std::string& key, const std::optional<T>& value, const R& rule) {
    if (value) check(key, *value, rule);
  }
  void check(const std::string& key, int64_t value, const rule::AtLeast& r) {
    c.at_least(key, value, r.min);
    c.check(value <= r.max, key, "must be at most {}, got {}", r.max, value);
  }
  void check(const std::string& key, double value, const rule::Positive& r) {
    c.positive(key, value);
    c.check(value <= r.max, key, "must be at most {}, got {}", r.max, value);
  }
  void check(const std::string& key, double value, const rule::NonNegative&) {
    c.non_negative(key, value);
  }
  void check(const std::string& key, double value, const rule::UnitInterval& r) {
    const bool ok = (r.low_open ? value > 0 : value >= 0) && (r.high_open ? value < 1 : value <= 1);
    c.check(ok, key, "must be in {}0, 1{}, got {}", r.low_open ? "(" : "[", r.high_open ? ")" : "]",
            value);
  }
  void check(const std::string& key, const std::array<double, 2>& v,
             const rule::EachInUnitInterval&) {
    c.check(v[0] >= 0 && v[0] < 1 && v[1] >= 0 && v[1] < 1, key,
            "each must be in [0, 1), got [{}, {}]", v[0], v[1]);
  }
  void check(const std::string& key, const std::vector<std::string>& names,
             const rule::DistinctNames&) {
    c.check(!names.empty(), key, "must name at least one");
    std::set<std::string> seen;
    for (const std::string& name : names) {
      if (seen.insert(name).second) continue;
      c.check(false, key, "lists '{}' twice", name);
      break;
    }
  }
  void check(const std::string& key, int64_t value, const rule::IntIs& r) {
    c.check(r.ok(value), key, "{}", fmt::format(fmt::runtime(r.message), value));
  }
  void check(const std::string& key, const std::string& value, const rule::TextIs& r) {
    c.check(r.ok(value), key, "{}", fmt::format(fmt::runtime(r.message), value));
  }
  // std::visit instantiates every rule for every field type: a row that pairs a rule with a
  // field it cannot check is a mistake in the schema, found by every config.
  template <typename T, typename R>
  void check(const std::string& key, const T&, const R&) {
    if (!std::is_same_v<R, rule::None>) fail("{}: the schema's rule does not fit its type", key);
  }
};

void check_model(Checker& c, const ModelConfig& m) {
  ModelChecks checks{c, m};
  visit_arch(m, [&](const auto& hf) { std::remove_cvref_t<decltype(hf)>::visit(hf, checks); });
}

void check_tokenizer(Checker& c, const RunConfig& config) {
  const TokenizerConfig& t = config.tokenizer;
  const bool chars = t.type == TokenizerType::kChar;
  c.check(!t.extra_ids || t.type == TokenizerType::kSentencePiece, "tokenizer.extra_ids",
          "sentinels are T5's SentencePiece pieces: set tokenizer.type: sentencepiece");
  c.check(!chars || !t.vocab_size, "tokenizer.vocab_size",
          "a char vocabulary is not trained to a size (it holds every symbol of data.train)");
  if (chars) return;
  // A missing vocabulary is trained from data.train when vocab_size says how big.
  if (t.vocab && !t.vocab_size) {
    if (t.type == TokenizerType::kBpe) {  // a directory of Hugging Face files
      c.directory_exists("tokenizer.vocab", *t.vocab);
    } else {
      c.file_exists("tokenizer.vocab", *t.vocab, " (set tokenizer.vocab_size to train one)");
    }
  }
  c.check(t.vocab || t.vocab_size || tokenizer_directory(config), "tokenizer.vocab",
          "missing: give the tokenizer's files, tokenizer.vocab_size to train one, or init_from");
}

void check_data(Checker& c, const RunConfig& config) {
  const DataConfig& d = config.data;
  c.check(!d.group_by_length || d.shuffle, "data.group_by_length",
          "needs data.shuffle (it groups the shuffled order)");
  c.check(d.random_replace_prob >= 0 && d.mask_replace_prob + d.random_replace_prob <= 1,
          "data.random_replace_prob", "must be in [0, 1 - data.mask_replace_prob], got {}",
          d.random_replace_prob);
  if (d.labels) {
    const auto& num_labels = config.model.num_labels;
    c.check(!num_labels || *num_labels == static_cast<int64_t>(d.labels->size()),
            "model.num_labels", "{} does not match the {} names of data.labels",
            num_labels.value_or(0), d.labels->size());
  }
}

void check_training(Checker& c, const RunConfig& config) {
  const TrainConfig& t = config.train;
  const int64_t warmup = config.schedule.warmup_steps;
  c.check(warmup >= 0 && warmup <= t.max_steps, "schedule.warmup_steps",
          "must be in [0, train.max_steps = {}], got {}", t.max_steps, warmup);

  c.check(config.eval.every_steps == 0 || config.data.valid, "eval.every_steps",
          "evaluating every {} steps needs data.valid", config.eval.every_steps);

  const OptimConfig& o = config.optim;
  c.check(o.decay_rate < 0, "optim.decay_rate",
          "must be < 0 (the second moment's decay 1 - t^decay_rate rises to 1), got {}",
          o.decay_rate);
  c.check(o.adafactor_eps[0] >= 0 && o.adafactor_eps[1] >= 0, "optim.adafactor_eps",
          "each must be >= 0, got [{}, {}]", o.adafactor_eps[0], o.adafactor_eps[1]);
}

// The metric's name is checked by load_run_config (train/tasks/), after the files exist.
void check_best_model(Checker& c, const RunConfig& config) {
  const EvalConfig& e = config.eval;
  if (!e.load_best_model_at_end) {
    for (const auto& [key, set] :
         {std::pair{"eval.metric_for_best_model", e.metric_for_best_model.has_value()},
          std::pair{"eval.greater_is_better", e.greater_is_better.has_value()}}) {
      c.check(!set, key, "has no effect without eval.load_best_model_at_end: true");
    }
    return;
  }
  c.check(config.data.valid.has_value(), "eval.load_best_model_at_end",
          "needs data.valid, whose evaluations it chooses among");
  c.check(e.every_steps > 0, "eval.load_best_model_at_end",
          "needs eval.every_steps > 0: without evaluations during training there is nothing to "
          "choose among");
}

// LoRA adapts a pretrained model; its other keys mean nothing without target_modules. (A key
// left at its default passes: a written run_config.yaml holds every key.)
void check_lora(Checker& c, const RunConfig& config) {
  const LoraConfig& l = config.lora;
  if (l.enabled()) {
    c.check(config.init_from.has_value(), "lora.target_modules",
            "LoRA adapts a pretrained model: needs init_from");
    return;
  }
  const LoraConfig defaults;
  for (const auto& [key, set] :
       {std::pair{"lora.r", l.r != defaults.r},
        std::pair{"lora.lora_alpha", l.lora_alpha != defaults.lora_alpha},
        std::pair{"lora.lora_dropout", l.lora_dropout != defaults.lora_dropout},
        std::pair{"lora.modules_to_save", l.modules_to_save.has_value()}}) {
    c.check(!set, key, "has no effect without lora.target_modules (the Linear modules to adapt)");
  }
}

}  // namespace

void validate(const RunConfig& config) {
  Checker c(config.origins);
  check_model(c, config.model);
  RowChecks rows{c, ""};
  visit_config(rows, config);
  check_tokenizer(c, config);
  check_data(c, config);
  check_training(c, config);
  check_best_model(c, config);
  check_lora(c, config);
}

// The longest sequence the model can place, and the key that says so.
std::pair<int64_t, std::string_view> position_limit(const ModelConfig& m) {
  return visit_arch(m, [&](const auto& hf) -> std::pair<int64_t, std::string_view> {
    using Config = std::remove_cvref_t<decltype(hf)>;
    if constexpr (std::is_same_v<Config, nn::GPT2Config>) {
      return {hf.n_positions, "model.n_positions"};
    } else if constexpr (std::is_same_v<Config, nn::RobertaConfig>) {
      // Positions start after the padding id (RoBERTa's 514 positions hold 512 tokens).
      return {hf.max_position_embeddings - m.pad_token_id.value_or(hf.pad_token_id) - 1,
              "model.max_position_embeddings (less pad_token_id + 1)"};
    } else if constexpr (std::is_same_v<Config, nn::T5Config>) {
      // Relative positions: no table to run out of.
      return {std::numeric_limits<int32_t>::max(), "T5's limit (none)"};
    } else {
      return {hf.max_position_embeddings, "model.max_position_embeddings"};
    }
  });
}

void check_files(const RunConfig& config, const ConfigChecks& checks) {
  Checker c(config.origins);
  c.file_exists("data.train", config.data.train);
  if (config.data.valid) c.file_exists("data.valid", *config.data.valid);
  if (config.data.test) c.file_exists("data.test", *config.data.test);
  if (config.init_from && !checks.init_from_written_later) {
    c.directory_exists("init_from", *config.init_from);
  }
  if (config.distill.teacher && !checks.init_from_written_later) {
    c.directory_exists("distill.teacher", *config.distill.teacher);
  }
}

}  // namespace heed::train
