#pragma once
// Decoding evaluation of an encoder-decoder: the model's own outputs (not teacher-forced
// predictions) scored against the references, as G2P and translation report results.
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "data/batch.h"
#include "nn/models/seq2seq_model.h"
#include "train/config/config.h"

namespace heed::train {

struct DecodedSource {
  std::vector<int32_t> source;
  std::vector<int32_t> output;                   // without the eos
  std::vector<std::vector<int32_t>> references;  // every target this source has
};

struct Seq2SeqDecoding {
  // sequence_error_rate and token_error_rate (see sequence_metrics.h).
  std::map<std::string, double> metrics;
  std::vector<DecodedSource> decoded;  // in order of first appearance
};

// Decodes every distinct source among `examples` once (greedy in batches of `batch_size`, or
// beam search source by source when generation.num_beams > 1) and scores its output against
// all of that source's targets in `examples`. The model must be in eval mode.
Seq2SeqDecoding decode_and_score(const nn::Seq2SeqModel& model,
                                 std::span<const data::Example> examples,
                                 const GenerationConfig& generation, int64_t batch_size);

}  // namespace heed::train
