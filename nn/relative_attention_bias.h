#pragma once
// T5's relative attention bias (Raffel et al. 2020; Hugging Face's T5Attention): a learned
// table [num_buckets, heads] looked up by the bucket of each key's position relative to the
// query. The bias depends on key - query alone, so attention takes it as a vector over the
// distances that occur ([heads, Tq + Tk - 1], ScaledDotProductOptions::distance_bias), never
// as a [Tq, Tk] tensor.
#include <cstdint>

#include "autograd/generator.h"
#include "nn/module.h"

namespace heed::nn {

// The bucket of relative position rp = key - query, as Hugging Face's _relative_position_bucket:
// bidirectional (the encoder) gives half the buckets to keys after the query; causal (the
// decoder) puts every key after the query in bucket 0. Of a direction's buckets, the first half
// hold distances exactly, the rest logarithmically wider ranges (in float32, as PyTorch computes
// them) up to max_distance, beyond which all share the last.
int64_t relative_position_bucket(int64_t relative_position, bool bidirectional, int64_t num_buckets,
                                 int64_t max_distance);

class RelativeAttentionBias : public Module {
 public:
  RelativeAttentionBias(int64_t num_buckets, int64_t max_distance, int64_t heads,
                        bool bidirectional, Generator& init, double init_std,
                        DType dtype = DType::f32);

  // [heads, Tq + Tk - 1] for Tq queries that are the last Tq of Tk positions (self-attention;
  // with a KV cache the new positions after the cached ones): entry d is the bias of
  // key - query = d - (Tk - 1). Gathered from the table, so its gradient reaches the table.
  Tensor distance_bias(int64_t query_length, int64_t key_length) const;

  int64_t num_buckets, max_distance;
  bool bidirectional;
  Tensor weight;  // [num_buckets, heads]: Hugging Face's relative_attention_bias.weight
};

}  // namespace heed::nn
