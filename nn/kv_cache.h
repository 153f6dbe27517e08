#pragma once
// Keys and values kept across decoding steps (Hugging Face's past_key_values), so that each
// step of generation projects and attends from the new tokens only, instead of running the
// whole prefix again.
#include <cstdint>
#include <vector>

#include "autograd/tensor.h"

namespace heed::nn {

// Rows rows[i] of t along its first dimension, as a new tensor (undefined stays undefined).
Tensor select_batch_rows(const Tensor& t, const std::vector<int64_t>& rows);

// One attention module's keys and values, [B, h, T, d] each; undefined until the first step.
// Self-attention appends the new positions at every step; cross-attention projects the
// encoder's memory once and reuses it.
struct AttentionCache {
  Tensor key, value;
  bool empty() const { return !key.defined(); }
  int64_t length() const { return empty() ? 0 : key.size(2); }
};

// The caches of a whole decoder stack: one self-attention cache per layer, and one
// cross-attention cache per layer for an encoder-decoder.
struct KVCache {
  std::vector<AttentionCache> self_attention;
  std::vector<AttentionCache> cross_attention;

  // The positions already decoded (0 for a new cache).
  int64_t length() const { return self_attention.empty() ? 0 : self_attention[0].length(); }
  void clear();
  // Keeps row rows[i] of every cached tensor as row i: beam search reorders its beams, and
  // a row may be repeated or dropped.
  void select_rows(const std::vector<int64_t>& rows);
};

}  // namespace heed::nn
