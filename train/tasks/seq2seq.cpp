// Sequence to sequence with an encoder-decoder (grapheme to phoneme, translation): lines of
// `source<TAB>target`. Evaluation also decodes the sources and scores the outputs, since
// teacher-forced accuracy flatters such a model.
#include "data/collators.h"
#include "nn/models/encoder_decoder.h"
#include "nn/models/t5.h"
#include "train/config/config_check.h"
#include "train/tasks/model_configs.h"
#include "train/tasks/registry.h"
#include "train/tasks/seq2seq_eval.h"

namespace heed::train {
namespace {

class Seq2SeqTask final : public TrainingTask {
 public:
  std::string_view summary() const override {
    return "sequence to sequence: a target text from a source text";
  }
  std::vector<Arch> architectures() const override { return {Arch::kBart, Arch::kT5}; }
  bool accepts_any_tokenizer() const override { return true; }
  bool has_targets() const override { return true; }

  void check(const RunConfig& config) const override {
    TrainingTask::check(config);
    Checker c(config.origins);
    for (const std::string& name : config.eval.decode_metrics.value_or(default_decoding_metrics()))
      c.one_of("eval.decode_metrics", name, decoding_metric_choices(), "metric");
  }

  // A WordPiece vocabulary serves both sides (BART and T5 share one embedding table), so it trains
  // on the sources and the targets.
  std::vector<std::string_view> vocabulary_texts(std::string_view line) const override {
    return data::split_tabs(line);
  }

  std::shared_ptr<const data::Dataset> read_split(const SplitSource& s,
                                                  data::LabelNames&) const override {
    const auto tok = s.data.tokenizer;
    const data::EncodeFn encode = [tok](std::string_view t) { return tok->encode(t); };
    const data::EncodeFn encode_target = [tok](std::string_view t) {
      return tok->encode_target(t);
    };
    return std::make_shared<data::Seq2SeqDataset>(
        s.path, encode, encode_target, static_cast<size_t>(s.config.data.max_source_length),
        static_cast<size_t>(s.config.data.max_target_length));
  }

  data::CollateFn collator(const RunConfig& c, const TaskData& d) const override {
    const data::TextTokenizer& tok = *d.tokenizer;
    const data::Seq2SeqIds ids{tok.pad_id(), tok.pad_id(), decoder_start_id(c, tok), tok.end_id()};
    return [ids](std::span<const data::Example> ex, data::Rng&) {
      return data::collate_seq2seq(ex, ids);
    };
  }

  std::shared_ptr<nn::PretrainedModel> make_model(const RunConfig& c,
                                                  const TaskData& d) const override {
    const auto seed = static_cast<uint64_t>(c.train.seed);
    if (c.model.arch() == Arch::kT5)
      return std::make_shared<nn::T5ForConditionalGeneration>(t5_config(c, d), seed);
    return std::make_shared<nn::EncoderDecoder>(bart_config(c, d), seed);
  }

  std::vector<std::string> decoding_metric_names(const EvalConfig& eval) const override {
    if (!eval.decode) return {};
    return eval.decode_metrics.value_or(default_decoding_metrics());
  }

  std::map<std::string, double> decoding_metrics(const nn::PretrainedModel& model,
                                                 const TaskData& d,
                                                 std::span<const data::Example> examples,
                                                 const RunConfig& c,
                                                 int64_t batch_size) const override {
    if (!c.eval.decode) return {};
    const std::vector<DecodedSource> decoded =
        decode_sources(encoder_decoder(model), examples, c.generation, batch_size);
    return score_decoded(decoded, decoding_metric_names(c.eval), *d.tokenizer);
  }

  // A few held-out sources with the model's output and the references.
  std::string end_of_run_examples(const nn::PretrainedModel& model, const TaskData& d,
                                  const RunConfig& c) const override {
    const data::Dataset* split = d.test ? d.test.get() : d.valid.get();
    if (!split) return {};
    constexpr size_t kCount = 6;
    std::vector<data::Example> examples;
    const size_t stride = std::max<size_t>(1, split->size() / kCount);
    for (size_t i = 0; i < split->size() && examples.size() < kCount; i += stride)
      examples.push_back(split->get(i));
    const std::vector<DecodedSource> decoded = decode_sources(
        encoder_decoder(model), examples, c.generation, static_cast<int64_t>(kCount));
    const data::TextTokenizer& tok = *d.tokenizer;
    std::string out = "outputs on held-out sources (output | reference):";
    for (const DecodedSource& s : decoded)
      out += fmt::format("\n  {} -> {} | {}", tok.decode_source(s.source), tok.decode(s.output),
                         tok.decode(s.references.front()));
    return out;
  }

 private:
  // make_model built it, so the model of this task is an encoder-decoder.
  static const nn::Seq2SeqModel& encoder_decoder(const nn::PretrainedModel& model) {
    return dynamic_cast<const nn::Seq2SeqModel&>(model);
  }
};

const TrainingTask& seq2seq_task() {
  static const Seq2SeqTask task;
  return task;
}

[[maybe_unused]] const bool kRegistered = register_task("seq2seq", 30, seq2seq_task);

}  // namespace

}  // namespace heed::train
