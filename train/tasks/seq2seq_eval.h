#pragma once
// Decoding evaluation of an encoder-decoder: the model's own outputs (not teacher-forced
// predictions) scored against the references, as G2P (error rates) and translation (BLEU,
// chrF) report results.
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "data/batch.h"
#include "data/text_tokenizer.h"
#include "nn/models/seq2seq_model.h"
#include "train/config/config.h"

namespace heed::train {

struct DecodedSource {
  std::vector<int32_t> source;
  std::vector<int32_t> output;                   // without the eos
  std::vector<std::vector<int32_t>> references;  // every target this source has
};

// Every name eval.decode_metrics accepts: sequence_error_rate and token_error_rate (G2P's WER
// and PER, on token ids, see sequence_metrics.h), bleu and chrf (sacrebleu's corpus BLEU and
// chrF, 0 to 100, on the decoded text, see bleu.h and chrf.h).
std::vector<std::string> decoding_metric_choices();
// What a seq2seq evaluation reports when eval.decode_metrics is unset: the error rates.
std::vector<std::string> default_decoding_metrics();

// Decodes every distinct source among `examples` once (greedy in batches of `batch_size`, or
// beam search source by source when generation.num_beams > 1), with all of that source's
// targets in `examples` as its references, in order of first appearance. The model must be in
// eval mode.
std::vector<DecodedSource> decode_sources(const nn::Seq2SeqModel& model,
                                          std::span<const data::Example> examples,
                                          const GenerationConfig& generation, int64_t batch_size);

// The metrics named in `metrics` (decoding_metric_choices) of the decoded sources; BLEU and
// chrF score the text `tokenizer` decodes outputs and references to.
std::map<std::string, double> score_decoded(std::span<const DecodedSource> decoded,
                                            const std::vector<std::string>& metrics,
                                            const data::TextTokenizer& tokenizer);

}  // namespace heed::train
