#include "train/tasks/seq2seq_eval.h"

#include <algorithm>

#include "decode/generation.h"
#include "decode/sequence_metrics.h"

namespace heed::train {

Seq2SeqDecoding decode_and_score(const nn::Seq2SeqModel& model,
                                 std::span<const data::Example> examples,
                                 const GenerationConfig& generation, int64_t batch_size) {
  Seq2SeqDecoding result;
  std::map<std::vector<int32_t>, size_t> index_of;
  for (const data::Example& e : examples) {
    auto [it, inserted] = index_of.try_emplace(e.input_ids, result.decoded.size());
    if (inserted) result.decoded.push_back({.source = e.input_ids});
    result.decoded[it->second].references.push_back(e.target_ids);
  }

  const auto eos = static_cast<int32_t>(model.special_tokens().eos);
  const auto strip_eos = [eos](std::vector<int32_t> tokens) {
    if (!tokens.empty() && tokens.back() == eos) tokens.pop_back();
    return tokens;
  };
  const size_t n = result.decoded.size();
  if (generation.num_beams > 1) {
    for (DecodedSource& d : result.decoded) {
      decode::BeamSearchResult r = decode::beam_search(
          model, d.source,
          {.num_beams = generation.num_beams, .max_new_tokens = generation.max_new_tokens});
      d.output = strip_eos(std::move(r.best.tokens));
    }
  } else {
    const size_t chunk = static_cast<size_t>(std::max<int64_t>(1, batch_size));
    for (size_t begin = 0; begin < n; begin += chunk) {
      const size_t end = std::min(n, begin + chunk);
      std::vector<std::vector<int32_t>> sources;
      for (size_t i = begin; i < end; ++i) sources.push_back(result.decoded[i].source);
      auto outputs = decode::greedy_decode_batch(model, sources, generation.max_new_tokens);
      for (size_t i = begin; i < end; ++i)
        result.decoded[i].output = strip_eos(std::move(outputs[i - begin]));
    }
  }

  decode::SequenceErrorAccumulator errors;
  for (const DecodedSource& d : result.decoded) errors.add(d.output, d.references);
  result.metrics = errors.results();
  return result;
}

}  // namespace heed::train
