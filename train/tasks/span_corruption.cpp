// T5's pretraining objective on a plain-text corpus: packed windows of the token stream, each with
// a share of its tokens dropped in spans that sentinels stand for; the decoder writes the spans
// back (data/span_corruption.h). The windows are as long as T5's preprocessing makes them, so
// that a corrupted input with its </s> is data.max_seq_length tokens.
#include "data/span_corruption.h"
#include "nn/models/t5.h"
#include "train/config/config_check.h"
#include "train/tasks/model_configs.h"
#include "train/tasks/registry.h"

namespace heed::train {
namespace {

data::SpanCorruptionOptions span_options(const RunConfig& c) {
  return {.noise_density = c.data.noise_density,
          .mean_noise_span_length = c.data.mean_noise_span_length};
}

class SpanCorruptionTask final : public TrainingTask {
 public:
  std::string_view summary() const override {
    return "span corruption: T5's pretraining, dropped spans written back";
  }
  std::vector<Arch> architectures() const override { return {Arch::kT5}; }
  // The check below asks for SentencePiece itself (the generic check knows encoders only).
  bool accepts_any_tokenizer() const override { return true; }
  int64_t min_sequence_length() const override { return 4; }

  void check(const RunConfig& config) const override {
    TrainingTask::check(config);
    Checker c(config.origins);
    c.check(config.tokenizer.type == TokenizerType::kSentencePiece, "tokenizer.type",
            "task 'span_corruption' needs a sentencepiece tokenizer with sentinels (T5's; set "
            "tokenizer.extra_ids)");
    c.check(config.data.mean_noise_span_length >= 1.0, "data.mean_noise_span_length",
            "{} is below one token", config.data.mean_noise_span_length);
  }

  std::shared_ptr<const data::Dataset> read_split(const SplitSource& s,
                                                  data::LabelNames&) const override {
    const auto lengths =
        data::span_corruption_lengths(s.config.data.max_seq_length, span_options(s.config));
    return std::make_shared<data::PackedWindowDataset>(s.token_cache(), s.data.tokenizer->end_id(),
                                                       static_cast<size_t>(lengths.raw_tokens));
  }

  data::CollateFn collator(const RunConfig& c, const TaskData& d) const override {
    const data::TextTokenizer& tok = *d.tokenizer;
    const data::SpanCorruptionOptions options = span_options(c);
    const auto lengths = data::span_corruption_lengths(c.data.max_seq_length, options);
    const int64_t spans = data::noise_counts(lengths.raw_tokens, options).spans;
    data::SpanCorruptionIds ids{.pad_id = tok.pad_id(),
                                .decoder_start_id = decoder_start_id(c, tok),
                                .eos_id = tok.end_id()};
    const std::vector<int32_t> sentinels = tok.sentinel_ids();
    HEED_CHECK(static_cast<int64_t>(sentinels.size()) >= spans,
               "tokenizer.extra_ids: span corruption of {}-token windows (data.max_seq_length {}) "
               "makes {} spans, each needing a sentinel; the tokenizer has {}",
               lengths.raw_tokens, c.data.max_seq_length, spans, sentinels.size());
    ids.sentinel_ids = sentinels;
    return [ids, options](std::span<const data::Example> ex, data::Rng& rng) {
      return data::collate_span_corruption(ex, ids, options, rng);
    };
  }

  std::shared_ptr<nn::PretrainedModel> make_model(const RunConfig& c,
                                                  const TaskData& d) const override {
    return std::make_shared<nn::T5ForConditionalGeneration>(t5_config(c, d),
                                                            static_cast<uint64_t>(c.train.seed));
  }
};

const TrainingTask& span_corruption_task() {
  static const SpanCorruptionTask task;
  return task;
}

[[maybe_unused]] const bool kRegistered =
    register_task("span_corruption", 35, span_corruption_task);

}  // namespace

}  // namespace heed::train
