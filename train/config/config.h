#pragma once
// The run configuration: one YAML file (plus `--set key=value` overrides) turned into plain
// structs that the Trainer and the model constructors take. No YAML type leaks out of here.
// Every key, its default and its meaning: configs/README.md.
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/dtype.h"
#include "base/error.h"
#include "data/char_tokenizer.h"
#include "data/wordpiece.h"
#include "train/config/model_config.h"

namespace heed::train {

// A config that cannot run. The message is one line that names where (`file:line`, or the
// `--set` override), the dotted key and the problem; the programs print it and exit with 2.
class ConfigError : public Error {
 public:
  using Error::Error;
};

// A task, by its YAML name ("mlm"). The tasks name themselves: each registers its name from
// its own file (train/tasks/registry.h), and task_names.h lists the names. Its own type rather
// than a std::string so that the schema's reader checks it against that list.
struct TaskName {
  std::string name;
  bool operator==(const TaskName&) const = default;
  bool operator==(std::string_view other) const { return name == other; }
};

enum class TokenizerType { kWordPiece, kBpe, kSentencePiece, kChar };
enum class OptimizerName { kAdamW, kSgd, kAdafactor };
enum class ScheduleName { kConstant, kLinear, kCosine };
enum class Resume { kNever, kAuto };
enum class Progress { kAuto, kAlways, kNever };

// The YAML spelling of each value ("mlm", "gpt2", "wordpiece", ...).
std::string_view to_string(TokenizerType value);
std::string_view to_string(OptimizerName value);
std::string_view to_string(ScheduleName value);
std::string_view to_string(Resume value);
std::string_view to_string(Progress value);

struct TokenizerConfig {
  TokenizerType type = TokenizerType::kWordPiece;
  // wordpiece: a vocab.txt; bpe: a directory holding vocab.json and merges.txt;
  // sentencepiece: a spiece.model; char: the JSON file of CharTokenizer::save. When it does
  // not exist the trainer builds it from data.train and writes it there (wordpiece, bpe and
  // sentencepiece need vocab_size for that). Unset: init_from's tokenizer, else built into
  // output_dir.
  std::optional<std::string> vocab;
  std::optional<int64_t> vocab_size;   // the size of a vocabulary to train
  bool lowercase = true;               // wordpiece
  std::optional<bool> strip_accents;   // wordpiece; unset: follows lowercase
  int64_t min_frequency = 2;           // wordpiece, bpe training: rarer words/pairs are not counted
  std::string model_type = "unigram";  // sentencepiece training: "unigram" or "bpe"
  // sentencepiece: T5's sentinels <extra_id_0>.. after the model's pieces; unset: init_from's
  // tokenizer's own count, else none.
  std::optional<int64_t> extra_ids;
  data::CharTokenizer::Unit unit = data::CharTokenizer::Unit::kCharacter;  // char
  // char, seq2seq: how targets are split (e.g. phonemes by whitespace); unset: as `unit`.
  std::optional<data::CharTokenizer::Unit> target_unit;
};

struct DataConfig {
  std::string train;  // required
  std::optional<std::string> valid;
  std::optional<std::string> test;
  int64_t max_seq_length = 128;  // mlm/clm windows, classification truncation
  // classification: which ids a text longer than max_seq_length keeps (data::Truncation)
  data::Truncation truncation = data::Truncation::kHead;
  double mlm_probability = 0.15;
  double mask_replace_prob = 0.8;       // of the selected positions: [MASK]
  double random_replace_prob = 0.1;     // of the selected positions: a random token
  double noise_density = 0.15;          // span_corruption: share of the tokens in noise spans
  double mean_noise_span_length = 3.0;  // span_corruption: tokens per span on average
  // Classification label names, index = class id. Unset: the training file's names, sorted.
  std::optional<std::vector<std::string>> labels;
  int64_t max_source_length = 128;  // seq2seq
  int64_t max_target_length = 128;  // seq2seq
  // Train on the first N examples of data.train only (Hugging Face's max_train_samples): a
  // smaller labelled set, e.g. to measure what pretraining is worth when labels are few.
  std::optional<int64_t> max_train_samples;
  bool shuffle = true;
  bool group_by_length = false;  // training batches of similar lengths (data::LoaderOptions)
  int64_t prefetch = 1;          // batches collated ahead on a background thread; 0 = none
};

struct OptimConfig {
  OptimizerName name = OptimizerName::kAdamW;
  double lr = 5e-5;
  std::array<double, 2> betas{0.9, 0.999};  // adamw
  double eps = 1e-8;                        // adamw
  double weight_decay = 0.0;
  double momentum = 0.0;  // sgd
  // adafactor (optim/adafactor.h), Hugging Face's names and defaults, at the scheduled lr
  bool scale_parameter = true;
  double clip_threshold = 1.0;
  double decay_rate = -0.8;
  double beta1 = 0.0;                                // 0: no first moment
  std::array<double, 2> adafactor_eps{1e-30, 1e-3};  // added to g^2; the least scale
};

struct ScheduleConfig {
  ScheduleName name = ScheduleName::kLinear;
  int64_t warmup_steps = 0;
};

struct TrainConfig {
  int64_t batch_size = 32;  // the global batch: data parallel, each rank takes its share of rows
  int64_t grad_accum_steps = 1;
  int64_t max_steps = 0;         // required: optimizer steps
  double max_grad_norm = 1.0;    // 0 = no clipping
  double label_smoothing = 0.0;  // training loss only; evaluation reports the plain NLL
  int64_t seed = 42;
  int64_t threads = 0;     // 0 = OpenMP's default (all cores)
  std::string output_dir;  // required
  Resume resume = Resume::kNever;
  bool overwrite_output_dir = false;    // a fresh run may replace an earlier run's files
  bool eval_at_end = true;              // when data.valid (and data.test) are given
  DType dtype = DType::f32;             // f32 or bf16 (bf16 matmul inputs, f32 accumulation)
  bool gradient_checkpointing = false;  // recompute each layer in backward, keeping its input
  bool check_memory = true;             // refuse a run whose estimated memory exceeds the machine's
  // Data parallel (mpirun -np N): gradients are summed in buckets of about this many MB, and
  // zero_stage 1 shards the optimizer state over the ranks (ZeRO-1).
  double bucket_mb = 25.0;
  int64_t zero_stage = 0;
};

struct EvalConfig {
  int64_t every_steps = 0;            // 0 = no periodic evaluation
  int64_t max_batches = 0;            // 0 = the whole split
  std::optional<int64_t> batch_size;  // unset: train.batch_size
  bool decode = true;                 // seq2seq: also decode the examples and score the outputs
  // seq2seq: what scores the decoded outputs; unset: the error rates (G2P's WER and PER).
  std::optional<std::vector<std::string>> decode_metrics;
  // Hugging Face's load_best_model_at_end: save a checkpoint at every evaluation of
  // data.valid that beats the best so far by metric_for_best_model, keep it through the
  // rotation, and load it for the final evaluation (train/run/best_model.h).
  bool load_best_model_at_end = false;
  std::optional<std::string> metric_for_best_model;  // unset: "loss"; "eval_" prefix allowed
  std::optional<bool> greater_is_better;  // unset: false for loss, perplexity and error rates
};

struct CheckpointConfig {
  int64_t every_steps = 500;  // 0 = only the final checkpoint
  int64_t keep_last = 3;
};

struct LoggingConfig {
  int64_t every_steps = 10;
  Progress progress = Progress::kAuto;  // auto: a progress bar when stderr is a terminal
};

struct GenerationConfig {  // seq2seq evaluation
  int64_t num_beams = 1;
  int64_t max_new_tokens = 64;
};

// task: distill (train/tasks/distillation.cpp): what the student learns from its teacher, with
// the names and defaults of Hugging Face's distillation example (Sanh et al. 2019).
struct DistillConfig {
  std::optional<std::string> teacher;  // a masked-LM model directory; required by task: distill
  double temperature = 2.0;
  double alpha_ce = 5.0;   // the soft targets: KL(teacher || student) at `temperature`, x T^2
  double alpha_mlm = 2.0;  // the student's own masked-LM loss
  double alpha_cos = 1.0;  // 1 - cos between the last hidden states
  bool restrict_ce_to_mask = false;  // soft targets at the masked tokens only (else every real one)
  bool init_from_teacher = true;     // the student starts from the teacher's layers
  // The teacher's layers that become the student's, in order; unset: spread evenly with the
  // first and the last (DistilBERT's [0, 2, 4, 7, 9, 11] of 12).
  std::optional<std::vector<int64_t>> student_layers;
};

// lora: fine-tuning through LoRA adapters with PEFT's LoraConfig names and defaults (nn/lora.h).
// On when target_modules is set.
struct LoraConfig {
  int64_t r = 8;
  double lora_alpha = 8;
  double lora_dropout = 0.0;
  std::optional<std::vector<std::string>> target_modules;   // Hugging Face module names
  std::optional<std::vector<std::string>> modules_to_save;  // modules trained whole
  std::string bias = "none";                                // the only one heed trains
  bool enabled() const { return target_modules.has_value(); }
};

// Where each key of a config came from, so that any check can name the place: the file and
// line of the key, or the `--set` override that set it (or a section above it).
struct Origins {
  std::string file;
  std::map<std::string, std::string, std::less<>> of_key;  // dotted key -> "file:7" or "--set k=v"

  // Where `key` was set; for an absent key, where its nearest enclosing section was; for
  // none, the file's first line.
  std::string where(std::string_view key) const {
    while (true) {
      if (auto it = of_key.find(key); it != of_key.end()) return it->second;
      const size_t dot = key.rfind('.');
      if (dot == std::string_view::npos) return file + ":1";
      key = key.substr(0, dot);
    }
  }
};

struct RunConfig {
  TaskName task = {"mlm"};  // required
  ModelConfig model;
  std::optional<std::string> init_from;  // a checkpoint directory to start from
  DistillConfig distill;
  LoraConfig lora;
  TokenizerConfig tokenizer;
  DataConfig data;
  OptimConfig optim;
  ScheduleConfig schedule;
  TrainConfig train;
  EvalConfig eval;
  CheckpointConfig checkpoint;
  LoggingConfig logging;
  GenerationConfig generation;
  // Where each key was set: checks that wait for the data (a classifier's label names) name
  // the place as the loading checks do.
  Origins origins;
};

// The model directory whose tokenizer a run takes when tokenizer.vocab names none: init_from's
// checkpoint, else a distillation's teacher.
inline std::optional<std::string> tokenizer_directory(const RunConfig& config) {
  return config.init_from ? config.init_from : config.distill.teacher;
}

// What load_run_config may take on trust: a pipeline checks its later stages before the
// stages that write their init_from have run.
struct ConfigChecks {
  bool init_from_written_later = false;  // init_from need not exist yet
  // Where each override came from, for messages, by position ("" or absent: "--set TEXT", as
  // the command line gives them); a pipeline names its stage's `set` line.
  std::vector<std::string> override_origins;
};

// Reads `path` and applies the overrides in order ("optim.lr=3e-4"; the value is YAML, so
// "optim.betas=[0.9,0.98]" works), checking types, unknown and required keys, but not values:
// load_run_config (train/tasks/load_run_config.h) is this with every check. Throws ConfigError.
RunConfig read_run_config(const std::string& path, const std::vector<std::string>& overrides = {},
                          const ConfigChecks& checks = {});

// The resolved config as YAML, every key with its value (unset ones as null); loading it
// again gives the same config. What `--print-config` prints.
std::string to_yaml(const RunConfig& config);

}  // namespace heed::train
