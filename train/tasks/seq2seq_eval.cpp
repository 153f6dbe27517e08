#include "train/tasks/seq2seq_eval.h"

#include <algorithm>

#include "base/error.h"
#include "decode/bleu.h"
#include "decode/chrf.h"
#include "decode/generation.h"
#include "decode/sequence_metrics.h"

namespace heed::train {

std::vector<std::string> decoding_metric_choices() {
  std::vector<std::string> names = decode::SequenceErrorAccumulator::metric_names();
  names.emplace_back("bleu");
  names.emplace_back("chrf");
  return names;
}

std::vector<std::string> default_decoding_metrics() {
  return decode::SequenceErrorAccumulator::metric_names();
}

std::vector<DecodedSource> decode_sources(const nn::Seq2SeqModel& model,
                                          std::span<const data::Example> examples,
                                          const GenerationConfig& generation, int64_t batch_size) {
  std::vector<DecodedSource> decoded;
  std::map<std::vector<int32_t>, size_t> index_of;
  for (const data::Example& e : examples) {
    auto [it, inserted] = index_of.try_emplace(e.input_ids, decoded.size());
    if (inserted) decoded.push_back({.source = e.input_ids});
    decoded[it->second].references.push_back(e.target_ids);
  }

  const auto eos = static_cast<int32_t>(model.special_tokens().eos);
  const auto strip_eos = [eos](std::vector<int32_t> tokens) {
    if (!tokens.empty() && tokens.back() == eos) tokens.pop_back();
    return tokens;
  };
  const size_t n = decoded.size();
  if (generation.num_beams > 1) {
    for (DecodedSource& d : decoded) {
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
      for (size_t i = begin; i < end; ++i) sources.push_back(decoded[i].source);
      auto outputs = decode::greedy_decode_batch(model, sources, generation.max_new_tokens);
      for (size_t i = begin; i < end; ++i)
        decoded[i].output = strip_eos(std::move(outputs[i - begin]));
    }
  }
  return decoded;
}

std::map<std::string, double> score_decoded(std::span<const DecodedSource> decoded,
                                            const std::vector<std::string>& metrics,
                                            const data::TextTokenizer& tokenizer) {
  const auto wanted = [&](std::string_view name) { return std::ranges::count(metrics, name) > 0; };
  for (const std::string& name : metrics)
    HEED_CHECK(std::ranges::count(decoding_metric_choices(), name) > 0,
               "eval.decode_metrics: unknown metric '{}'", name);
  std::map<std::string, double> results;
  if (decoded.empty()) return results;

  decode::SequenceErrorAccumulator errors;
  decode::BleuAccumulator bleu;
  decode::ChrfAccumulator chrf;
  const bool text = wanted("bleu") || wanted("chrf");
  for (const DecodedSource& d : decoded) {
    errors.add(d.output, d.references);
    if (!text) continue;
    const std::string output = tokenizer.decode(d.output);
    std::vector<std::string> references;
    for (const auto& r : d.references) references.push_back(tokenizer.decode(r));
    if (wanted("bleu")) bleu.add(output, references);
    if (wanted("chrf")) chrf.add(output, references);
  }
  for (const auto& [name, value] : errors.results())
    if (wanted(name)) results[name] = value;
  if (wanted("bleu")) results["bleu"] = bleu.score().bleu;
  if (wanted("chrf")) results["chrf"] = chrf.score();
  return results;
}

}  // namespace heed::train
