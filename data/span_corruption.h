#pragma once
// T5's span corruption (Raffel et al. 2020, section 3.1.4; Hugging Face's run_t5_mlm_flax.py):
// a share of a window's tokens, in spans of a mean length, is dropped from the input, each span
// replaced by one sentinel <extra_id_k>; the target is each sentinel followed by the span it
// replaced. Every random choice comes from the Rng the caller passes, so a batch depends only
// on its place in the run (resumable like the other collators).
#include <cstdint>
#include <span>
#include <vector>

#include "data/batch.h"
#include "data/rng.h"

namespace heed::data {

struct SpanCorruptionOptions {
  double noise_density = 0.15;          // share of the tokens in spans
  double mean_noise_span_length = 3.0;  // tokens per span, on average
};

// How many raw tokens a window takes so that its corrupted input, </s> included, is at most
// `input_length` long, and how long its target then is (</s> included): T5's
// compute_input_and_target_lengths. 128 -> 141 raw tokens, target 29 (15% of 141 is 21 noise
// tokens in 7 spans: 120 kept + 7 sentinels + </s>; 21 + 7 + </s>); 512 -> 568 and 114.
struct SpanCorruptionLengths {
  int64_t raw_tokens = 0;
  int64_t target_length = 0;
};
SpanCorruptionLengths span_corruption_lengths(int64_t input_length,
                                              const SpanCorruptionOptions& options);

// The number of noise tokens and of spans in `length` tokens: round(length x density) clamped to
// [1, length - 1], then round(noise / mean span length), at least 1 (round half to even, as
// numpy's). Spans never outnumber the tokens on either side.
struct NoiseCounts {
  int64_t noise_tokens = 0;
  int64_t spans = 0;
};
NoiseCounts noise_counts(int64_t length, const SpanCorruptionOptions& options);

// T5's random_spans_noise_mask: true for the tokens in noise spans. The noise tokens and the
// others are each cut into `spans` runs of at least one token at uniformly drawn cut points, and
// the runs alternate, kept first, so that the mask starts with kept tokens and ends in noise.
// A length below 2 has no noise.
std::vector<bool> random_spans_noise_mask(int64_t length, const SpanCorruptionOptions& options,
                                          Rng& rng);

// The input (kept tokens, each noise span replaced by its sentinel) and the target (each
// sentinel followed by its span), neither with </s>. sentinel_ids[k] is <extra_id_k>; there
// must be one per span.
struct CorruptedSpans {
  std::vector<int32_t> input, target;
};
CorruptedSpans corrupt_spans(std::span<const int32_t> tokens, const std::vector<bool>& noise,
                             std::span<const int32_t> sentinel_ids);

struct SpanCorruptionIds {
  int32_t pad_id = 0;
  int32_t decoder_start_id = 0;
  int32_t eos_id = 1;
  std::vector<int32_t> sentinel_ids;  // <extra_id_0>, <extra_id_1>, ...
};
// A seq2seq batch from windows of raw tokens (Example::input_ids): each window corrupted, its
// input ending in </s>; decoder inputs [start] + target, labels target + </s> (collate_seq2seq).
Batch collate_span_corruption(std::span<const Example> windows, const SpanCorruptionIds& ids,
                              const SpanCorruptionOptions& options, Rng& rng);

}  // namespace heed::data
