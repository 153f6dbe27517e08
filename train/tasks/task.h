#pragma once
// A training task as one object: everything that differs between masked-LM, causal LM,
// sequence classification, token classification and seq2seq. The config checks, the data
// set-up, the trainer and its evaluation ask the run's task and hold no branch on which task
// it is. A new task is one file in this folder, which registers it under its YAML name
// (registry.h), and that file's line in train/CMakeLists.txt.
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "data/batch.h"
#include "data/datasets.h"
#include "data/loader.h"
#include "data/token_cache.h"
#include "nn/models/pretrained.h"
#include "train/config/config.h"
#include "train/tasks/task_data.h"

namespace heed::train {

// The loss of one batch, with the logits or predictions and the labels its metrics need
// (aligned: row i of the logits predicts label i). With a request for less than the logits,
// a model may return only the predictions (each row's arg max), or neither.
struct BatchLoss {
  Tensor loss, logits, predictions, labels;
  int64_t targets = 0;
};

// Label smoothing is for the training loss only: evaluation asks for 0 and reports the plain
// NLL, and asks for predictions (its metrics read each row's arg max); a training step asks
// for the loss only.
struct LossRequest {
  double label_smoothing = 0.0;
  nn::HeadOutputs outputs = nn::HeadOutputs::logits;
};

// What reading one split of the data needs from the run.
struct SplitSource {
  const RunConfig& config;
  const TaskData& data;  // the tokenizer
  std::string split;     // train, valid or test
  std::string path;
  // The split's token cache (built on first use), for the tasks that read windows of a corpus.
  std::function<std::shared_ptr<const data::TokenCache>()> token_cache;
};

class TrainingTask {
 public:
  virtual ~TrainingTask() = default;

  // --- what the config may say ---
  // The checks of `config` that depend on the task (the architecture, the tokenizer, the
  // sequence lengths): a ConfigError naming where the key was set. load_run_config runs it.
  virtual void check(const RunConfig& config) const;
  // What it trains, in a few words for the docs of the `task` key ("masked LM").
  virtual std::string_view summary() const = 0;
  // The model architectures the task trains: model.arch must name one of them.
  virtual std::vector<Arch> architectures() const = 0;
  // Whether every tokenizer type can serve it (through TextTokenizer's questions); otherwise
  // it needs its architecture's own (encoder_tokenizer: WordPiece for BERT, byte-level BPE for
  // RoBERTa).
  virtual bool accepts_any_tokenizer() const { return false; }
  // Whether it learns from a teacher model (distill.teacher).
  virtual bool has_teacher() const { return false; }
  // Whether its examples are source/target pairs: data.max_source_length and
  // max_target_length bound them, and a char tokenizer may split targets differently.
  virtual bool has_targets() const { return false; }
  // The fewest tokens data.max_seq_length may allow.
  virtual int64_t min_sequence_length() const { return 1; }
  // Whether data.truncation may choose which end of a long text is kept.
  virtual bool chooses_truncation() const { return false; }

  // --- the data ---
  // The texts of one line of data.train that a WordPiece vocabulary is trained on (views into
  // the line).
  virtual std::vector<std::string_view> vocabulary_texts(std::string_view line) const;
  // The label names before any split is read: data.labels unless the task reads them
  // otherwise. A dataset that finds them empty takes its own file's labels.
  virtual data::LabelNames initial_labels(const RunConfig& config,
                                          std::span<const std::string> files) const;
  // One split's examples; `labels` as initial_labels, which a classifier may fill in.
  virtual std::shared_ptr<const data::Dataset> read_split(const SplitSource& source,
                                                          data::LabelNames& labels) const = 0;
  virtual data::CollateFn collator(const RunConfig& config, const TaskData& data) const = 0;

  // --- the model ---
  // A freshly initialised model of model.arch, sized by the tokenizer and the labels.
  virtual std::shared_ptr<nn::PretrainedModel> make_model(const RunConfig& config,
                                                          const TaskData& data) const = 0;

  // --- loss and evaluation ---
  virtual BatchLoss loss(const nn::PretrainedModel& model, const data::Batch& batch,
                         const LossRequest& request) const;
  // The classes evaluation scores one by one (<class>_f1, ...): a classifier's labels.
  virtual std::vector<std::string> scored_classes(const std::vector<std::string>& labels) const {
    (void)labels;
    return {};
  }
  // The same, known from the config before any data is read (the config check of
  // eval.metric_for_best_model): a classifier reads only the label column of data.train.
  virtual std::vector<std::string> scored_classes_from_config(const RunConfig& config) const {
    (void)config;
    return {};
  }
  // Whether its splits are streams of text whose loss an evaluation also reports in bits per
  // byte (Dataset::tokens_per_byte).
  virtual bool reports_bits_per_byte() const { return false; }
  // Every metric an evaluation reports: the teacher-forced ones, then decoding_metric_names.
  std::vector<std::string> metric_names(const std::vector<std::string>& scored_classes,
                                        const EvalConfig& eval) const;
  // Metrics of the model's own outputs (seq2seq's error rates, BLEU, chrF), beside the
  // teacher-forced ones.
  virtual std::vector<std::string> decoding_metric_names(const EvalConfig& eval) const {
    (void)eval;
    return {};
  }
  // Those metrics over `examples`; the model is in eval mode.
  virtual std::map<std::string, double> decoding_metrics(const nn::PretrainedModel& model,
                                                         const TaskData& data,
                                                         std::span<const data::Example> examples,
                                                         const RunConfig& config,
                                                         int64_t batch_size) const;

  // --- the end of a run ---
  // A few examples of what the trained model does on held-out data, for the log; empty for
  // none. The model is in eval mode and no gradient is recorded.
  virtual std::string end_of_run_examples(const nn::PretrainedModel& model, const TaskData& data,
                                          const RunConfig& config) const;
};

// The tokenizer type an encoder architecture is trained with (BERT's and DistilBERT's WordPiece,
// RoBERTa's byte-level BPE with <s> </s> <pad> <mask>).
TokenizerType encoder_tokenizer(Arch arch);

// "bert, roberta or distilbert": the architectures a task accepts, for messages and docs.
std::string arch_names(const std::vector<Arch>& archs);

// The task registered under `name`, a value of the config's `task` (registry.h). Fails for a
// name no task registered.
const TrainingTask& task_for(std::string_view name);

}  // namespace heed::train
