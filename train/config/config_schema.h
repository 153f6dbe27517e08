#pragma once
// The config's schema, written once: which keys each section has, in which order, which field
// of RunConfig each one fills, and each key's row: its rule, what a resumed run may do with it
// and its doc. Reading YAML, writing YAML, checking values, comparing two configs and listing
// the keys (configs/README.md's tables) are visitors over these functions, so they can never
// disagree. A new key is its field in config.h, its row here, and its consumer.
//
// A visitor V provides
//   v.field(key, value, row)    for a leaf (value: int64_t, double, bool, std::string, an
//                               enum of EnumInfo, a TaskName, std::array<double, 2>, a vector of
//                               strings, or an optional of these)
//   v.section(key, body)        for a nested mapping; body() visits its keys
// C is RunConfig or const RunConfig, so one schema serves readers and writers.
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "train/config/config.h"

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
};

inline bool is_sentencepiece_model_type(const std::string& name) {
  return name == "unigram" || name == "bpe";
}
inline bool is_not_empty(const std::string& text) {
  return !text.empty();
}
inline bool is_zero_stage(int64_t stage) {
  return stage == 0 || stage == 1;
}

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
      v.field(name, ModelConfig::derived(m, name), Row{});
    } else {
      v.field(name, value, Row{});
    }
  }
  void divides(const char*, int64_t, const char*, int64_t) {}
};

// The model's keys are those of its architecture's Hugging Face config, so `arch` comes
// first and decides the rest.
template <typename V, typename M>
void visit_model(V& v, M& m) {
  v.field("arch", m.arch,
          {.doc = "`bert` (encoder), `gpt2` (decoder-only), `bart` (encoder-decoder).",
           .need = Need::kRequiredFirst});
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
  v.field("task", c.task,
          {.doc = "`mlm` (masked LM), `clm` (causal LM), `seq2seq`, `classification` (one label "
                  "per text), `token_classification` (one tag per word). `mlm`, `classification` "
                  "and `token_classification` need `model.arch: bert`, `clm` needs `gpt2`, "
                  "`seq2seq` needs `bart`.",
           .resume = OnResume::kFixed,
           .need = Need::kRequired});
  v.section("model", [&] { visit_model(v, c.model); });
  v.field("init_from", c.init_from,
          {.doc = "A checkpoint directory (`config.json`, `model.safetensors`, `vocab.txt`) whose "
                  "weights start the run (fine-tuning); a head the checkpoint lacks is newly "
                  "initialized. Must exist.",
           .resume = OnResume::kFixed,
           .type = "path"});
  v.section("tokenizer", [&] {
    auto& t = c.tokenizer;
    v.field("type", t.type,
            {.doc = "`wordpiece` (BERT's), `bpe` (GPT-2's byte-level BPE: every byte has a "
                    "spelling, no unknown token), `sentencepiece` (Google's library: T5's, "
                    "ALBERT's) or `char` (one token per character or symbol). Tasks other than "
                    "`clm` and `seq2seq` need `wordpiece`.",
             .resume = OnResume::kFixed});
    v.field(
        "vocab", t.vocab,
        {.doc =
             "wordpiece: a `vocab.txt`; bpe: a directory holding `vocab.json` and `merges.txt` (a "
             "Hugging Face GPT-2 or RoBERTa directory works); sentencepiece: a `spiece.model`; "
             "char: the JSON file a char tokenizer saves. If it does not exist, the trainer builds "
             "the vocabulary from `data.train` and writes it there (wordpiece, bpe and "
             "sentencepiece need `vocab_size` for that; without it a missing file is an error). "
             "`null`: `init_from`'s tokenizer, else a vocabulary built into `train.output_dir`.",
         .resume = OnResume::kFixed,
         .type = "path"});
    v.field(
        "vocab_size", t.vocab_size,
        {.doc = "wordpiece, bpe, sentencepiece: the size of the vocabulary to train when `vocab` "
                "is missing. A trained bpe holds `<|endoftext|>` (id 0), the 256 byte symbols and "
                "its merges, as Hugging Face's `ByteLevelBPETokenizer` trains it; a trained "
                "sentencepiece model has T5's `<pad>` 0, `</s>` 1, `<unk>` 2, and `<s>` 3.",
         .resume = OnResume::kFixed,
         .rule = rule::AtLeast{1}});
    v.field(
        "lowercase", t.lowercase,
        {.doc = "wordpiece: lower-case the text (uncased models).", .resume = OnResume::kFixed});
    v.field("strip_accents", t.strip_accents,
            {.doc = "wordpiece: strip accents; `null`: follow `lowercase` (as BertTokenizer).",
             .resume = OnResume::kFixed});
    v.field("min_frequency", t.min_frequency,
            {.doc = "wordpiece training: words seen fewer times are not counted; bpe training: a "
                    "pair seen fewer times is not merged.",
             .resume = OnResume::kFixed,
             .rule = rule::AtLeast{1}});
    v.field(
        "model_type", t.model_type,
        {.doc = "sentencepiece training: `unigram` or `bpe`, the library's two model types.",
         .resume = OnResume::kFixed,
         .rule =
             rule::TextIs{is_sentencepiece_model_type,
                          "'{}' is not a SentencePiece model type heed trains (unigram or bpe)"},
         .type = "name"});
    v.field("unit", t.unit,
            {.doc = "char: `character` (each Unicode character is a token) or `whitespace` (each "
                    "whitespace-separated symbol, e.g. phonemes).",
             .resume = OnResume::kFixed});
    v.field(
        "target_unit", t.target_unit,
        {.doc =
             "char, seq2seq only: how targets are split, when not as `unit` (grapheme-to-phoneme: "
             "`unit: character`, `target_unit: whitespace`). Both sides share one vocabulary.",
         .resume = OnResume::kFixed});
  });
  v.section("data", [&] {
    auto& d = c.data;
    v.field("train", d.train,
            {.doc = "Training data: plain text (one document per line, `mlm`/`clm`), TSV "
                    "`label<TAB>text[<TAB>text_b]` (`classification`), CoNLL `word<TAB>tag` lines "
                    "with blank lines between sentences (`token_classification`), TSV "
                    "`source<TAB>target` (`seq2seq`). Must exist.",
             .resume = OnResume::kFixed,
             .need = Need::kRequired,
             .type = "path"});
    v.field(
        "valid", d.valid,
        {.doc =
             "Validation data, same format; needed for `eval.every_steps`. Must exist when given.",
         .resume = OnResume::kApplies,
         .type = "path"});
    v.field("test", d.test,
            {.doc = "Test data, evaluated at the end. Must exist when given.",
             .resume = OnResume::kApplies,
             .type = "path"});
    v.field(
        "max_seq_length", d.max_seq_length,
        {.doc = "Tokens per example (MLM windows with `[CLS]`/`[SEP]`, causal LM context, "
                "classification truncation). At least 3 for `mlm`; at most the model's positions.",
         .resume = OnResume::kFixed});
    v.field(
        "truncation", d.truncation,
        {.doc = "`classification`: which word pieces a text longer than `max_seq_length` keeps. "
                "`head`: the first ones (Hugging Face's default, `truncation_side=\"right\"`); "
                "`tail`: the last ones; `head_tail`: the first half and the last half of the "
                "budget (the head gets the odd one), which Sun et al. (2019) found best for long "
                "documents, whose ends carry signatures and footers. A checkpoint records it in "
                "`tokenizer_config.json` (`heed_truncation`, and `truncation_side` `left` for "
                "`tail`, `right` otherwise, which is what transformers reads), and `infer "
                "classify` cuts the same way unless `--truncation` says otherwise. Other tasks "
                "refuse anything but `head`.",
         .resume = OnResume::kFixed});
    v.field("mlm_probability", d.mlm_probability,
            {.doc = "`mlm`: share of non-special tokens selected for prediction, in (0, 1).",
             .resume = OnResume::kFixed,
             .rule = rule::UnitInterval{.low_open = true}});
    v.field("mask_replace_prob", d.mask_replace_prob,
            {.doc = "`mlm`: of the selected, the share replaced by `[MASK]`. A micro-batch in "
                    "which no position was selected (short sequences, a small last batch) has no "
                    "loss; it is skipped, with a line saying so, and the step's mean is over the "
                    "other micro-batches; a step whose micro-batches all have none makes no update "
                    "and is not counted. Masking stays Hugging Face's, with no position forced.",
             .resume = OnResume::kFixed,
             .rule = rule::UnitInterval{.high_open = false}});
    v.field("random_replace_prob", d.random_replace_prob,
            {.doc = "`mlm`: of the selected, the share replaced by a random token (the rest stay); "
                    "`mask_replace_prob + random_replace_prob ≤ 1`.",
             .resume = OnResume::kFixed});
    v.field("labels", d.labels,
            {.doc = "Classification label names, index = class id. `null`: the distinct labels of "
                    "`data.train`, sorted.",
             .resume = OnResume::kFixed,
             .rule = rule::DistinctNames{}});
    v.field("max_source_length", d.max_source_length,
            {.doc = "`seq2seq`: source tokens kept.", .resume = OnResume::kFixed});
    v.field("max_target_length", d.max_target_length,
            {.doc = "`seq2seq`: target tokens kept (room for the start/end token included).",
             .resume = OnResume::kFixed});
    v.field("max_train_samples", d.max_train_samples,
            {.doc = "Train on the first N examples of `data.train` only (Hugging Face's "
                    "`max_train_samples`; MLM/CLM: the first N windows); `null`: all of them. "
                    "Validation and test stay whole. The first N in file order are a random sample "
                    "only if the file is in random order, as the prepared `datasets/` files are. "
                    "Used to compare a pretrained encoder with a random one when labels are few. A "
                    "resume refuses a changed value.",
             .resume = OnResume::kFixed,
             .rule = rule::AtLeast{1}});
    v.field("shuffle", d.shuffle,
            {.doc = "Shuffle the training examples each epoch (seeded by `train.seed`).",
             .resume = OnResume::kFixed});
    v.field(
        "group_by_length", d.group_by_length,
        {.doc = "With `shuffle`: put examples of similar length in a batch, so that batches pad "
                "little (Hugging Face's `group_by_length`). The shuffled order is cut into groups "
                "of 50 batches, each sorted by length, and the batches are then shuffled. Worth it "
                "when lengths vary a lot (words, sentences, e-mails). MLM/CLM windows are full "
                "length on a corpus of long documents but as short as the document on one of short "
                "documents (`datasets/spam_text/`: mean about 290 of 512 tokens).",
         .resume = OnResume::kFixed});
    v.field("prefetch", d.prefetch,
            {.doc = "Batches collated ahead on a background thread; 0 = none.",
             .resume = OnResume::kAppliesNotMade,
             .rule = rule::AtLeast{0}});
  });
  v.section("optim", [&] {
    auto& o = c.optim;
    v.field("name", o.name,
            {.doc = "`adamw` (PyTorch's AdamW; no decay on biases and LayerNorm weights) or `sgd` "
                    "(with momentum).",
             .resume = OnResume::kFixed});
    v.field("lr", o.lr,
            {.doc = "Peak learning rate (after warmup); > 0.",
             .resume = OnResume::kApplies,
             .rule = rule::Positive{}});
    v.field("betas", o.betas,
            {.doc = "adamw: moment decay rates, each in [0, 1).",
             .resume = OnResume::kFixed,
             .rule = rule::EachInUnitInterval{}});
    v.field("eps", o.eps,
            {.doc = "adamw: added after the square root; > 0.",
             .resume = OnResume::kFixed,
             .rule = rule::Positive{}});
    v.field("weight_decay", o.weight_decay,
            {.doc = "Decoupled weight decay; ≥ 0.",
             .resume = OnResume::kFixed,
             .rule = rule::NonNegative{}});
    v.field("momentum", o.momentum,
            {.doc = "sgd: momentum, in [0, 1).",
             .resume = OnResume::kFixed,
             .rule = rule::UnitInterval{}});
  });
  v.section("schedule", [&] {
    v.field(
        "name", c.schedule.name,
        {.doc = "Learning rate after warmup: `constant`, `linear` (to 0 at `max_steps`) or "
                "`cosine` (half a cosine to 0), as Hugging Face's `get_*_schedule_with_warmup`.",
         .resume = OnResume::kFixed});
    v.field("warmup_steps", c.schedule.warmup_steps,
            {.doc = "Steps of linear warmup from 0; in [0, `train.max_steps`].",
             .resume = OnResume::kFixed});
  });
  v.section("train", [&] {
    auto& t = c.train;
    v.field(
        "batch_size", t.batch_size,
        {.doc =
             "Examples per micro-batch, over the whole job: under `mpirun -np N` each rank takes "
             "its N-th of the rows of every batch, so the same config trains the same model on any "
             "number of processes. A step sees `batch_size × grad_accum_steps` examples.",
         .resume = OnResume::kFixed,
         .rule = rule::AtLeast{1}});
    v.field("grad_accum_steps", t.grad_accum_steps,
            {.doc = "Micro-batches whose gradients add up to one optimizer step.",
             .resume = OnResume::kFixed,
             .rule = rule::AtLeast{1}});
    v.field("max_steps", t.max_steps,
            {.doc = "Optimizer steps of the run.",
             .resume = OnResume::kApplies,
             .rule = rule::AtLeast{1},
             .need = Need::kRequired});
    v.field("max_grad_norm", t.max_grad_norm,
            {.doc = "Clip the global gradient norm to this; 0 = no clipping.",
             .resume = OnResume::kApplies,
             .rule = rule::NonNegative{}});
    v.field("label_smoothing", t.label_smoothing,
            {.doc = "In [0, 1). The training loss becomes PyTorch's `cross_entropy(..., "
                    "label_smoothing=ε)`: (1-ε)·NLL + ε·mean over classes of -log p (Hugging "
                    "Face's `label_smoothing_factor`). Logged training losses include it; "
                    "evaluation reports the plain NLL, so perplexity keeps its meaning.",
             .resume = OnResume::kFixed,
             .rule = rule::UnitInterval{}});
    v.field("seed", t.seed,
            {.doc = "Seeds initialization, dropout, masking and shuffling.",
             .resume = OnResume::kFixed,
             .rule = rule::AtLeast{0}});
    // At most 1024: far beyond any CPU this runs on; libgomp crashes when asked for a hundred
    // thousand.
    v.field("threads", t.threads,
            {.doc = "Threads for the kernels; 0 = OpenMP's default (all cores); at most 1024 (more "
                    "than the CPUs here only warns).",
             .resume = OnResume::kAppliesNotMade,
             .rule = rule::AtLeast{.min = 0, .max = 1024}});
    v.field("output_dir", t.output_dir,
            {.doc = "Where checkpoints, `metrics.jsonl` and (if built) the vocabulary go.",
             .resume = OnResume::kAppliesNotMade,
             .rule = rule::TextIs{is_not_empty, "must not be empty"},
             .need = Need::kRequired,
             .type = "path"});
    v.field(
        "resume", t.resume,
        {.doc =
             "`auto`: continue from the newest complete checkpoint in `output_dir` if there is one "
             "(what `--resume` sets; a checkpoint whose files do not match its `manifest.json` is "
             "skipped, with a line saying why); `never`: start fresh. A resumed run compares the "
             "config with its checkpoint's `run_config.yaml`. It takes a changed value of the keys "
             "whose resume column says `applies` (those that only steer the rest of the run: "
             "`optim.lr` becomes the schedule's base rate from then on), and says so. Any other "
             "change stops it before any work (exit 2), naming the key: the checkpoint learnt "
             "under the old value. So the `run_config.yaml` of every checkpoint is what ran.",
         .resume = OnResume::kHowStarted});
    v.field(
        "overwrite_output_dir", t.overwrite_output_dir,
        {.doc = "A fresh run (`resume: never`) into an `output_dir` that holds an earlier run "
                "(`checkpoint-*` directories, `metrics.jsonl`, `final_metrics.json`) stops before "
                "any work (exit 2): it would append to the earlier `metrics.jsonl`, and the "
                "checkpoint rotation, which keeps the newest steps, would delete the new run's "
                "lower-numbered checkpoints. `true` deletes those files first (token caches and a "
                "vocabulary built there stay). Hugging Face's `overwrite_output_dir`.",
         .resume = OnResume::kHowStarted});
    v.field("eval_at_end", t.eval_at_end,
            {.doc = "Evaluate on `data.valid` and `data.test` (those given) after the last step.",
             .resume = OnResume::kApplies});
    v.field("dtype", t.dtype,
            {.doc = "`f32`, or `bf16` (matrix products on bf16 inputs with f32 accumulation; "
                    "master weights stay f32).",
             .resume = OnResume::kApplies});
    v.field("check_memory", t.check_memory,
            {.doc = "Before the model is built, the run estimates what it will hold (parameters "
                    "with gradients and optimizer state, and the activations a micro-batch keeps "
                    "for backward), prints it, and stops (exit 2) when that exceeds the machine's "
                    "memory (or its cgroup's limit). `false` tries anyway.",
             .resume = OnResume::kAppliesNotMade});
    // At most 4096: a bucket is one MPI message, whose count of floats is an int.
    v.field("bucket_mb", t.bucket_mb,
            {.doc = "Data parallel (`mpirun -np N train ...`): gradients are summed over the ranks "
                    "in flat buckets of about this many MB (at most 4096), in reverse parameter "
                    "order, each started as soon as backward has finished its gradients.",
             .resume = OnResume::kApplies,
             .rule = rule::Positive{.max = 4096}});
    v.field(
        "zero_stage", t.zero_stage,
        {.doc =
             "Data parallel: `1` shards the optimizer state over the ranks (ZeRO-1): each keeps "
             "AdamW's moments for its share of the parameters (8/N bytes per parameter instead of "
             "8), updates that share, and sends the new values to the others. Same model as `0`, "
             "bit for bit; checkpoints hold the whole state, so any world size resumes them.",
         .resume = OnResume::kApplies,
         .rule = rule::IntIs{is_zero_stage,
                             "must be 0 (every rank keeps the whole optimizer state) or 1 (ZeRO-1: "
                             "each keeps its share), got {}"}});
  });
  v.section("eval", [&] {
    v.field("every_steps", c.eval.every_steps,
            {.doc = "Evaluate on `data.valid` every this many steps; 0 = only at the end.",
             .resume = OnResume::kApplies,
             .rule = rule::AtLeast{0}});
    v.field(
        "max_batches", c.eval.max_batches,
        {.doc =
             "Batches per evaluation; 0 = the whole split. A whole split is evaluated longest "
             "example first, so that each batch pads little (the same examples, the same figures; "
             "MLM masks other tokens, as randomly); a part of it is the file's first batches.",
         .resume = OnResume::kApplies,
         .rule = rule::AtLeast{0}});
    v.field("batch_size", c.eval.batch_size,
            {.doc = "Evaluation batch size; `null`: `train.batch_size`.",
             .resume = OnResume::kApplies,
             .rule = rule::AtLeast{1}});
    v.field(
        "decode", c.eval.decode,
        {.doc = "seq2seq: besides the teacher-forced loss and accuracy, decode the evaluated "
                "examples (greedy, or beam search with `generation.num_beams` > 1) and report "
                "`sequence_error_rate` and `token_error_rate` against every reference of a source. "
                "Turn off when decoding a large split at every evaluation costs too much.",
         .resume = OnResume::kApplies});
    v.field(
        "load_best_model_at_end", c.eval.load_best_model_at_end,
        {.doc = "Hugging Face's option: every evaluation of `data.valid` (each `eval.every_steps`, "
                "and the last step's) that beats the best so far by `eval.metric_for_best_model` "
                "saves a checkpoint, which the rotation keeps besides the newest "
                "`checkpoint.keep_last`; at the end that model is loaded, so the final evaluation "
                "of validation and test, `final_metrics.json` (`best_metric`, `best_global_step`, "
                "`best_model_checkpoint`) and the closing examples are of it. A tie keeps the "
                "earlier step. Needs `data.valid` and `eval.every_steps` > 0. The best so far is "
                "part of each checkpoint, so a resumed run chooses as an uninterrupted one.",
         .resume = OnResume::kFixed});
    v.field("metric_for_best_model", c.eval.metric_for_best_model,
            {.doc = "What \"best\" is judged by: a name the evaluation reports (`loss`, "
                    "`perplexity`, `accuracy`; a classifier's `macro_f1` and `<label>_precision`, "
                    "`_recall`, `_f1`; seq2seq with `eval.decode`: `sequence_error_rate`, "
                    "`token_error_rate`), with or without Hugging Face's `eval_` prefix. `null`: "
                    "`loss`. Only with `eval.load_best_model_at_end`. Checked before any work, "
                    "like every key: a classifier's `<label>` against `data.labels` or, when that "
                    "is unset, the labels of `data.train`.",
             .resume = OnResume::kFixed});
    v.field("greater_is_better", c.eval.greater_is_better,
            {.doc = "Whether a higher `eval.metric_for_best_model` is better. `null`: false for "
                    "`loss`, `perplexity` and the error rates, true otherwise (Hugging Face "
                    "decides by the suffix `loss` alone). Only with `eval.load_best_model_at_end`.",
             .resume = OnResume::kFixed});
  });
  v.section("checkpoint", [&] {
    v.field(
        "every_steps", c.checkpoint.every_steps,
        {.doc = "Save `output_dir/checkpoint-STEP/` every this many steps; 0 = only the final one.",
         .resume = OnResume::kApplies,
         .rule = rule::AtLeast{0}});
    v.field("keep_last", c.checkpoint.keep_last,
            {.doc = "Checkpoints kept; older ones are deleted. At least 1.",
             .resume = OnResume::kAppliesNotMade,
             .rule = rule::AtLeast{1}});
  });
  v.section("logging", [&] {
    v.field("every_steps", c.logging.every_steps,
            {.doc = "Log (and append to `metrics.jsonl`) every this many steps.",
             .resume = OnResume::kAppliesNotMade,
             .rule = rule::AtLeast{1}});
    v.field("progress", c.logging.progress,
            {.doc = "Progress bar: `auto` (when stderr is a terminal; plain lines otherwise), "
                    "`always`, `never`.",
             .resume = OnResume::kAppliesNotMade});
  });
  v.section("generation", [&] {
    v.field("num_beams", c.generation.num_beams,
            {.doc = "seq2seq evaluation: beam width; 1 = greedy decoding.",
             .resume = OnResume::kApplies,
             .rule = rule::AtLeast{1}});
    v.field("max_new_tokens", c.generation.max_new_tokens,
            {.doc = "seq2seq evaluation: longest generated output.",
             .resume = OnResume::kApplies,
             .rule = rule::AtLeast{1}});
  });
}

// Every dotted key of a config whose model is `arch`, in schema order (sections included).
std::vector<std::string> config_keys(Arch arch);

// One key of a config: its value as to_yaml writes it, its documented type and its row.
struct KeyValue {
  std::string key;  // dotted
  std::string value;
  std::string type;  // "int", "path or null", ...
  Row row;
};

// Every key of `config` (no sections), in schema order.
std::vector<KeyValue> config_values(const RunConfig& config);

// The row of dotted `key`; a key the schema does not have (of another architecture, or gone)
// has the default row, which is kFixed.
Row row_of(std::string_view key);

// configs/README.md's key tables (all but model.*'s architecture fields): key, type, default,
// what a resume does, doc. What `train --list-keys --markdown` prints.
std::string keys_markdown();

}  // namespace heed::train
