#include "train/tasks/predictions.h"

#include <algorithm>
#include <numeric>

#include "autograd/ops.h"
#include "decode/generation.h"
#include "nn/models/gpt.h"

namespace heed::train {
namespace {

// The ids as text with their special tokens: WordPiece's own spelling, else each special
// token's name around the decoded text between them.
std::string spelled(const data::TextTokenizer& tok, const std::vector<int32_t>& ids) {
  if (tok.type_name() == "wordpiece") {
    return tok.wordpiece("fill-mask examples").decode(ids, /*skip_special_tokens=*/false);
  }
  std::string text;
  std::vector<int32_t> run;
  for (int32_t id : ids) {
    if (!tok.is_special(id)) {
      run.push_back(id);
      continue;
    }
    text += tok.decode(run) + tok.token(id);
    run.clear();
  }
  return text + tok.decode(run);
}

}  // namespace

std::string mlm_prediction_examples(const nn::PretrainedModel& model,
                                    const data::TextTokenizer& tok, const data::Dataset& split,
                                    int examples, int top_k) {
  std::string out = "fill-mask on held-out text:";
  const size_t stride = std::max<size_t>(1, split.size() / std::max(1, examples));
  for (int e = 0; e < examples && static_cast<size_t>(e) * stride < split.size(); ++e) {
    std::vector<int32_t> ids = split.get(e * stride).input_ids;
    if (ids.size() > 24) ids.resize(24);  // a short context reads better
    std::vector<size_t> candidates;
    for (size_t i = 1; i < ids.size(); ++i) {
      // A word's first piece: WordPiece's without "##", a byte-level BPE's with "Ġ" (a space).
      std::string piece = tok.token(ids[i]);
      const bool bpe = tok.type_name() == "bpe";
      if (bpe && piece.rfind("\u0120", 0) != 0) continue;
      if (bpe) piece = piece.substr(2);
      if (!tok.is_special(ids[i]) && !piece.empty() && piece.rfind("##", 0) != 0 &&
          std::isalpha(static_cast<unsigned char>(piece[0]))) {
        candidates.push_back(i);
      }
    }
    if (candidates.empty()) continue;
    const size_t pos = candidates[candidates.size() / 2];
    const int32_t answer = ids[pos];
    ids[pos] = tok.mask_id();
    if (ids.back() != tok.end_id()) ids.push_back(tok.end_id());
    std::vector<int64_t> ids64(ids.begin(), ids.end());
    const int64_t T = static_cast<int64_t>(ids64.size());
    nn::ModelInputs in{.input_ids = from_vector<int64_t>(ids64, {1, T})};
    Tensor logits = model.forward(in).logits;  // [1, T, V]
    std::vector<float> probs =
        softmax(logits.select(0, 0).select(0, static_cast<int64_t>(pos)), -1).to_vector<float>();
    std::vector<int32_t> order(probs.size());
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + top_k, order.end(),
                      [&](int32_t a, int32_t b) { return probs[a] > probs[b]; });
    out += fmt::format("\n  {}\n    answer '{}':", spelled(tok, ids), tok.token(answer));
    for (int k = 0; k < top_k; ++k) {
      out += fmt::format(" {} {:.3f}{}", tok.token(order[k]), probs[order[k]],
                         k + 1 < top_k ? "," : "");
    }
  }
  return out;
}

std::string gpt_sample_examples(const nn::PretrainedModel& model, const data::TextTokenizer& tok,
                                const data::Dataset& split, int examples, int prompt_tokens,
                                int new_tokens, uint64_t seed) {
  const auto* gpt = dynamic_cast<const nn::GPT*>(&model);
  HEED_CHECK(gpt != nullptr, "samples: {} is not a GPT", model.architecture());
  std::string out = "samples (top-k 40, temperature 0.8) from held-out prompts:";
  const size_t stride = std::max<size_t>(1, split.size() / std::max(1, examples));
  for (int e = 0; e < examples && static_cast<size_t>(e) * stride < split.size(); ++e) {
    std::vector<int32_t> ids = split.get(e * stride).input_ids;
    if (ids.size() > static_cast<size_t>(prompt_tokens)) ids.resize(prompt_tokens);
    decode::GenerationOptions o{.max_new_tokens = new_tokens,
                                .temperature = 0.8,
                                .top_k = 40,
                                .seed = seed + static_cast<uint64_t>(e),
                                .eos_token_id = static_cast<int32_t>(gpt->config.eos_token_id)};
    decode::GenerationResult r = decode::generate(*gpt, ids, o);
    // One line per sample: a byte-level BPE spells line ends.
    auto one_line = [](std::string text) {
      std::ranges::replace(text, '\n', ' ');
      return text;
    };
    out += fmt::format("\n  {} >>> {}", one_line(tok.decode(ids)), one_line(tok.decode(r.tokens)));
  }
  return out;
}

}  // namespace heed::train
