#include "data/span_corruption.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "data/collators.h"

namespace heed::data {
namespace {

// numpy's round: half to even (the default rounding mode of nearbyint).
int64_t round_half_even(double x) {
  return static_cast<int64_t>(std::nearbyint(x));
}

// The corrupted input's and the target's lengths, </s> included, for `tokens` raw tokens.
SpanCorruptionLengths lengths_of(int64_t tokens, const SpanCorruptionOptions& o) {
  const NoiseCounts n = noise_counts(tokens, o);
  return {.raw_tokens = tokens - n.noise_tokens + n.spans + 1,
          .target_length = n.noise_tokens + n.spans + 1};
}

// `items` cut into `segments` runs of at least one: segments - 1 distinct cut points among
// the items - 1 gaps, uniformly (T5's _random_segmentation shuffles a vector of that many
// ones; a partial Fisher-Yates draws the same distribution).
std::vector<int64_t> random_segmentation(int64_t items, int64_t segments, Rng& rng) {
  std::vector<int64_t> gaps(static_cast<size_t>(items - 1));
  for (size_t i = 0; i < gaps.size(); ++i) gaps[i] = static_cast<int64_t>(i) + 1;
  for (int64_t i = 0; i < segments - 1; ++i) {
    const auto j = i + static_cast<int64_t>(rng.uniform_int(static_cast<uint64_t>(items - 1 - i)));
    std::swap(gaps[static_cast<size_t>(i)], gaps[static_cast<size_t>(j)]);
  }
  std::vector<int64_t> cuts(gaps.begin(), gaps.begin() + (segments - 1));
  std::sort(cuts.begin(), cuts.end());
  std::vector<int64_t> lengths;
  int64_t previous = 0;
  for (int64_t cut : cuts) {
    lengths.push_back(cut - previous);
    previous = cut;
  }
  lengths.push_back(items - previous);
  return lengths;
}

}  // namespace

NoiseCounts noise_counts(int64_t length, const SpanCorruptionOptions& o) {
  if (length < 2) return {};
  const int64_t noise = std::clamp<int64_t>(
      round_half_even(static_cast<double>(length) * o.noise_density), 1, length - 1);
  const int64_t spans =
      std::max<int64_t>(1, round_half_even(static_cast<double>(noise) / o.mean_noise_span_length));
  return {.noise_tokens = noise, .spans = std::min({spans, noise, length - noise})};
}

SpanCorruptionLengths span_corruption_lengths(int64_t input_length,
                                              const SpanCorruptionOptions& o) {
  HEED_CHECK(input_length >= 2, "span corruption needs inputs of at least 2 tokens, not {}",
             input_length);
  // The input shrinks by (noise - spans) as the window grows: the longest window that fits.
  int64_t tokens = input_length;
  while (lengths_of(tokens + 1, o).raw_tokens <= input_length) ++tokens;
  return {.raw_tokens = tokens, .target_length = lengths_of(tokens, o).target_length};
}

std::vector<bool> random_spans_noise_mask(int64_t length, const SpanCorruptionOptions& o,
                                          Rng& rng) {
  std::vector<bool> noise(static_cast<size_t>(std::max<int64_t>(length, 0)), false);
  const NoiseCounts n = noise_counts(length, o);
  if (n.spans == 0) return noise;
  const std::vector<int64_t> noise_runs = random_segmentation(n.noise_tokens, n.spans, rng);
  const std::vector<int64_t> kept_runs = random_segmentation(length - n.noise_tokens, n.spans, rng);
  size_t position = 0;
  for (size_t span = 0; span < noise_runs.size(); ++span) {
    position += static_cast<size_t>(kept_runs[span]);
    for (int64_t i = 0; i < noise_runs[span]; ++i) noise[position++] = true;
  }
  return noise;
}

CorruptedSpans corrupt_spans(std::span<const int32_t> tokens, const std::vector<bool>& noise,
                             std::span<const int32_t> sentinel_ids) {
  HEED_CHECK(noise.size() == tokens.size(), "span corruption: a mask of {} for {} tokens",
             noise.size(), tokens.size());
  CorruptedSpans out;
  size_t span = 0;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (!noise[i]) {
      out.input.push_back(tokens[i]);
      continue;
    }
    if (i == 0 || !noise[i - 1]) {  // a span starts: one sentinel on each side
      HEED_CHECK(span < sentinel_ids.size(),
                 "span corruption: span {} has no sentinel (the tokenizer has {}; "
                 "tokenizer.extra_ids)",
                 span + 1, sentinel_ids.size());
      out.input.push_back(sentinel_ids[span]);
      out.target.push_back(sentinel_ids[span]);
      ++span;
    }
    out.target.push_back(tokens[i]);
  }
  return out;
}

Batch collate_span_corruption(std::span<const Example> windows, const SpanCorruptionIds& ids,
                              const SpanCorruptionOptions& options, Rng& rng) {
  std::vector<Example> pairs;
  pairs.reserve(windows.size());
  for (const Example& window : windows) {
    const auto length = static_cast<int64_t>(window.input_ids.size());
    CorruptedSpans c = corrupt_spans(
        window.input_ids, random_spans_noise_mask(length, options, rng), ids.sentinel_ids);
    c.input.push_back(ids.eos_id);
    Example e;
    e.input_ids = std::move(c.input);
    e.target_ids = std::move(c.target);
    pairs.push_back(std::move(e));
  }
  return collate_seq2seq(pairs, {.pad_id = ids.pad_id,
                                 .decoder_pad_id = ids.pad_id,
                                 .decoder_start_id = ids.decoder_start_id,
                                 .eos_id = ids.eos_id});
}

}  // namespace heed::data
