// The KV cache: decoding position by position through a cache gives what one forward pass
// over the whole sequence gives, for attention alone, a GPT and a BART decoder.
#include <gtest/gtest.h>

#include <memory>

#include "autograd/grad_mode.h"
#include "autograd/random.h"
#include "base/error.h"
#include "nn/attention.h"
#include "nn/kv_cache.h"
#include "nn/models/encoder_decoder.h"
#include "nn/models/gpt.h"
#include "support/test_util.h"

using namespace heed;
using namespace heed::nn;
using heed::testing::max_relative_error;

namespace {

Tensor random_input(const Shape& s, uint64_t seed, DType dtype) {
  Generator g(seed);
  return randn(s, g, dtype);
}

// The positions [start, end) of a [B, T, ...] tensor.
Tensor positions(const Tensor& x, int64_t start, int64_t end) {
  return x.slice(1, start, end).contiguous();
}

// Runs `step(start, end)` over a prefill of `first` positions and then one position at a
// time, and concatenates the outputs along the time dimension.
template <typename Step>
Tensor step_by_step(int64_t length, int64_t first, Step step) {
  std::vector<Tensor> outputs{step(0, first)};
  for (int64_t t = first; t < length; ++t) outputs.push_back(step(t, t + 1));
  return concat(outputs, 1);
}

// f64 checks the bookkeeping to rounding; f32 runs the oneDNN products, whose shapes differ
// between one position and many.
double tolerance(DType dtype) {
  return dtype == DType::f64 ? 1e-12 : 2e-5;
}

class KVCacheTest : public ::testing::TestWithParam<DType> {};

TEST_P(KVCacheTest, SelfAttentionStepByStepEqualsTheCausalForward) {
  const DType dtype = GetParam();
  NoGradGuard no_grad;
  Generator init(21);
  for (bool fused : {false, true}) {
    MultiHeadAttention attn({.embed_dim = 16, .num_heads = 4, .fused_qkv = fused, .dtype = dtype},
                            init, std::make_shared<Generator>(1));
    attn.eval();
    const Tensor x = random_input({2, 6, 16}, 1, dtype);
    const Tensor full = attn.forward(x, {.causal = true}).output;
    AttentionCache cache;
    const Tensor stepped = step_by_step(6, 2, [&](int64_t a, int64_t b) {
      return attn.forward(positions(x, a, b), {.causal = true, .cache = &cache}).output;
    });
    EXPECT_EQ(cache.length(), 6);
    EXPECT_LT(max_relative_error(stepped, full), tolerance(dtype)) << "fused " << fused;
  }
}

TEST_P(KVCacheTest, ThePaddingMaskCoversTheCachedPositions) {
  const DType dtype = GetParam();
  NoGradGuard no_grad;
  Generator init(22);
  MultiHeadAttention attn({.embed_dim = 16, .num_heads = 2, .dtype = dtype}, init,
                          std::make_shared<Generator>(1));
  attn.eval();
  const Tensor x = random_input({2, 5, 16}, 2, dtype);
  // Row 1 hides its positions 1 and 3 from every later query.
  const Tensor mask = from_vector<int64_t>({1, 1, 1, 1, 1, 1, 0, 1, 0, 1}, {2, 5});
  const Tensor full = attn.forward(x, {.key_padding_mask = mask, .causal = true}).output;
  AttentionCache cache;
  const Tensor stepped = step_by_step(5, 1, [&](int64_t a, int64_t b) {
    return attn
        .forward(
            positions(x, a, b),
            {.key_padding_mask = mask.slice(1, 0, b).contiguous(), .causal = true, .cache = &cache})
        .output;
  });
  EXPECT_LT(max_relative_error(stepped, full), tolerance(dtype));
  // A mask of only the new position is a shape error naming the key length, and the failed
  // step leaves the cache as it was.
  EXPECT_THROW(
      attn.forward(
          positions(x, 4, 5),
          {.key_padding_mask = mask.slice(1, 4, 5).contiguous(), .causal = true, .cache = &cache}),
      Error);
  EXPECT_EQ(cache.length(), 5);
}

TEST_P(KVCacheTest, CrossAttentionProjectsTheMemoryOnceAndReusesIt) {
  const DType dtype = GetParam();
  NoGradGuard no_grad;
  Generator init(23);
  MultiHeadAttention attn({.embed_dim = 16, .num_heads = 4, .dtype = dtype}, init,
                          std::make_shared<Generator>(1));
  attn.eval();
  const Tensor query = random_input({2, 3, 16}, 3, dtype);
  const Tensor memory = random_input({2, 7, 16}, 4, dtype);
  const Tensor full = attn.forward(query, {.key_value = memory}).output;
  AttentionCache cache;
  attn.forward(positions(query, 0, 1), {.key_value = memory, .cache = &cache});
  EXPECT_EQ(cache.length(), 7);
  // Later steps read the cached projections (a cache belongs to one memory): another memory
  // of the same shape changes nothing, one of another length is an error.
  const Tensor other = random_input({2, 7, 16}, 5, dtype);
  const Tensor later =
      attn.forward(positions(query, 1, 3), {.key_value = other, .cache = &cache}).output;
  EXPECT_LT(max_relative_error(later, positions(full, 1, 3)), tolerance(dtype));
  EXPECT_THROW(attn.forward(positions(query, 1, 2),
                            {.key_value = random_input({2, 6, 16}, 6, dtype), .cache = &cache}),
               Error);
}

TEST_P(KVCacheTest, SelectRowsReordersRepeatsAndDropsRows) {
  const DType dtype = GetParam();
  NoGradGuard no_grad;
  Generator init(24);
  MultiHeadAttention attn({.embed_dim = 16, .num_heads = 4, .dtype = dtype}, init,
                          std::make_shared<Generator>(1));
  attn.eval();
  const Tensor x = random_input({3, 4, 16}, 6, dtype);
  KVCache kv;
  kv.self_attention.resize(1);
  attn.forward(positions(x, 0, 3), {.causal = true, .cache = &kv.self_attention[0]});
  const std::vector<int64_t> rows{2, 0, 0};
  kv.select_rows(rows);
  const Tensor picked = select_batch_rows(x, rows);
  const Tensor full = attn.forward(picked, {.causal = true}).output;
  const Tensor last =
      attn.forward(positions(picked, 3, 4), {.causal = true, .cache = &kv.self_attention[0]})
          .output;
  EXPECT_LT(max_relative_error(last, positions(full, 3, 4)), tolerance(dtype));
  EXPECT_THROW(kv.select_rows({3}), Error);
}

TEST_P(KVCacheTest, GptForwardCachedEqualsTheForwardPass) {
  const DType dtype = GetParam();
  NoGradGuard no_grad;
  GPT2Config c;
  c.vocab_size = 20;
  c.n_positions = 8;
  c.n_embd = 16;
  c.n_layer = 2;
  c.n_head = 2;
  c.initializer_range = 0.3;
  GPT gpt(c, 5, dtype);
  gpt.eval();
  const Tensor ids = from_vector<int64_t>({3, 7, 1, 19, 4, 4, 0, 12, 5, 9, 9, 2, 8, 16}, {2, 7});
  ModelInputs in;
  in.input_ids = ids;
  const Tensor full = gpt.forward(in).logits;
  KVCache cache;
  const Tensor stepped = step_by_step(
      7, 3, [&](int64_t a, int64_t b) { return gpt.forward_cached(positions(ids, a, b), cache); });
  EXPECT_EQ(cache.length(), 7);
  EXPECT_LT(max_relative_error(stepped, full), tolerance(dtype));
  // Two more positions would pass the 8 of the position table.
  EXPECT_THROW(gpt.forward_cached(positions(ids, 0, 2), cache), Error);
}

TEST_P(KVCacheTest, BartDecodeWithACacheEqualsTheDecodePass) {
  const DType dtype = GetParam();
  NoGradGuard no_grad;
  BartConfig c;
  c.vocab_size = 20;
  c.max_position_embeddings = 12;
  c.d_model = 16;
  c.encoder_layers = c.decoder_layers = 2;
  c.encoder_attention_heads = c.decoder_attention_heads = 2;
  c.encoder_ffn_dim = c.decoder_ffn_dim = 32;
  c.init_std = 0.3;
  c.pad_token_id = 0;
  EncoderDecoder bart(c, 6, dtype);
  bart.eval();
  const Tensor source = from_vector<int64_t>({5, 6, 7, 8, 9, 3, 4, 0, 0, 0}, {2, 5});
  const Tensor source_mask = from_vector<int64_t>({1, 1, 1, 1, 1, 1, 1, 0, 0, 0}, {2, 5});
  const Tensor memory = bart.encode(source, source_mask);
  const Tensor target = from_vector<int64_t>({2, 11, 12, 13, 14, 2, 15, 16, 17, 18}, {2, 5});
  const Tensor full = bart.decode(target, memory, source_mask);
  KVCache cache;
  const Tensor stepped = step_by_step(5, 1, [&](int64_t a, int64_t b) {
    return bart.decode(positions(target, a, b), memory, source_mask, Tensor(), &cache);
  });
  EXPECT_EQ(cache.length(), 5);
  EXPECT_LT(max_relative_error(stepped, full), tolerance(dtype));
}

INSTANTIATE_TEST_SUITE_P(Dtypes, KVCacheTest, ::testing::Values(DType::f64, DType::f32),
                         [](const auto& info) { return info.param == DType::f64 ? "f64" : "f32"; });

}  // namespace
