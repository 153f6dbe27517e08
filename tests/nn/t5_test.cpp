// T5's pieces: the relative position buckets against values worked out by hand, the bias as a
// vector over distances, f64 gradient checks of the RMS norm, the feed-forward blocks and
// attention with the bias table, the kernel's bias against the materialised one, decoding with
// the KV cache against decoding without, and checkpoint directories both ways.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "autograd/grad_mode.h"
#include "autograd/random.h"
#include "io/json_file.h"
#include "nn/attention.h"
#include "nn/feed_forward.h"
#include "nn/layer_norm.h"
#include "nn/models/t5.h"
#include "nn/pretrained_io.h"
#include "nn/relative_attention_bias.h"
#include "support/module_test_util.h"
#include "support/test_util.h"

using namespace heed;
using namespace heed::nn;
using heed::testing::expect_gradcheck;
using heed::testing::max_relative_error;
using heed::testing::param;
using heed::testing::random_tensor;
using heed::testing::with_parameters;
using Inputs = std::vector<Tensor>;
namespace fs = std::filesystem;

namespace {

int64_t bidirectional(int64_t rp) {
  return relative_position_bucket(rp, true, 32, 128);
}
int64_t causal(int64_t rp) {
  return relative_position_bucket(rp, false, 32, 128);
}

}  // namespace

// 32 buckets, max distance 128. Bidirectional: 16 per direction (keys after the query from 16
// on), 8 exact, then 8 + floor(8 log(n/8) / log(128/8)) = 8 + floor(2 log2(n/8)), at most 15.
TEST(T5Buckets, BidirectionalByHand) {
  EXPECT_EQ(bidirectional(0), 0);
  EXPECT_EQ(bidirectional(-1), 1);
  EXPECT_EQ(bidirectional(1), 17);
  EXPECT_EQ(bidirectional(-7), 7);  // the last exact bucket
  EXPECT_EQ(bidirectional(7), 23);
  EXPECT_EQ(bidirectional(-8), 8);  // 2 log2(1) = 0
  EXPECT_EQ(bidirectional(8), 24);
  EXPECT_EQ(bidirectional(-12), 9);  // 2 log2(1.5) = 1.17
  EXPECT_EQ(bidirectional(12), 25);
  EXPECT_EQ(bidirectional(-16), 10);  // 2 log2(2) = 2
  EXPECT_EQ(bidirectional(16), 26);
  EXPECT_EQ(bidirectional(-32), 12);  // 4
  EXPECT_EQ(bidirectional(32), 28);
  EXPECT_EQ(bidirectional(-64), 14);  // 6
  EXPECT_EQ(bidirectional(64), 30);
  EXPECT_EQ(bidirectional(-128), 15);  // 8 + 8 = 16, capped at 15
  EXPECT_EQ(bidirectional(128), 31);
  EXPECT_EQ(bidirectional(-200), 15);
  EXPECT_EQ(bidirectional(200), 31);
  EXPECT_EQ(bidirectional(-100000), 15);
  EXPECT_EQ(bidirectional(100000), 31);
}

// Causal: every key at or after the query in bucket 0; n = query - key, 16 exact, then
// 16 + floor(16 log(n/16) / log(128/16)) = 16 + floor(16/3 log2(n/16)), at most 31.
TEST(T5Buckets, CausalByHand) {
  for (int64_t rp : {0, 1, 7, 8, 12, 16, 32, 64, 128, 200}) EXPECT_EQ(causal(rp), 0) << rp;
  EXPECT_EQ(causal(-1), 1);
  EXPECT_EQ(causal(-7), 7);
  EXPECT_EQ(causal(-8), 8);
  EXPECT_EQ(causal(-12), 12);
  EXPECT_EQ(causal(-15), 15);   // the last exact bucket
  EXPECT_EQ(causal(-16), 16);   // 16/3 log2(1) = 0
  EXPECT_EQ(causal(-20), 17);   // 16/3 log2(1.25) = 1.72
  EXPECT_EQ(causal(-32), 21);   // 16/3 = 5.33
  EXPECT_EQ(causal(-64), 26);   // 10.67
  EXPECT_EQ(causal(-127), 31);  // 15.94
  EXPECT_EQ(causal(-128), 31);  // 16, capped at 31
  EXPECT_EQ(causal(-200), 31);
  EXPECT_EQ(causal(-100000), 31);
}

// Query i against key j of a [3, 5] grid: rp = j - i.
TEST(T5Buckets, QueryByKeyMatrix) {
  const std::vector<std::vector<int64_t>> both{
      {0, 17, 18, 19, 20}, {1, 0, 17, 18, 19}, {2, 1, 0, 17, 18}};
  const std::vector<std::vector<int64_t>> past{{0, 0, 0, 0, 0}, {1, 0, 0, 0, 0}, {2, 1, 0, 0, 0}};
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 5; ++j) {
      EXPECT_EQ(bidirectional(j - i), both[i][j]) << i << ", " << j;
      EXPECT_EQ(causal(j - i), past[i][j]) << i << ", " << j;
    }
  }
}

// Entry d of the vector is the bias of key - query = d - (Tk - 1), the queries being the last
// Tq of Tk positions; a cache's step (one query) gets the new position's row alone.
TEST(T5RelativeAttentionBias, DistanceVectorGathersTheTable) {
  Generator init(3);
  for (bool both : {true, false}) {
    RelativeAttentionBias table(32, 128, 2, both, init, 1.0);
    const std::vector<float> w = table.weight.to_vector<float>();
    for (auto [tq, tk] : {std::pair<int64_t, int64_t>{3, 3}, {1, 7}, {2, 5}}) {
      const Tensor bias = table.distance_bias(tq, tk);
      ASSERT_EQ(bias.shape(), (Shape{2, tq + tk - 1}));
      const std::vector<float> got = bias.contiguous().to_vector<float>();
      for (int64_t h = 0; h < 2; ++h) {
        for (int64_t d = 0; d < tq + tk - 1; ++d) {
          const int64_t bucket = relative_position_bucket(d - (tk - 1), both, 32, 128);
          EXPECT_EQ(got[h * (tq + tk - 1) + d], w[bucket * 2 + h]) << tq << " " << tk << " " << d;
        }
      }
    }
  }
}

TEST(T5Gradcheck, RmsNormModule) {
  LayerNorm norm(6, 1e-6, DType::f64, NormKind::rms_norm);
  EXPECT_FALSE(norm.bias.defined());
  heed::testing::spread_parameters(norm, 6, 0.5);
  expect_gradcheck([&](const Inputs& x) { return norm.forward(x[0]); },
                   with_parameters({param({2, 3, 6}, 7)}, norm));
}

TEST(T5Gradcheck, FeedForwardBlocks) {
  for (bool gated : {false, true}) {
    SCOPED_TRACE(gated ? "gated-gelu" : "relu");
    Generator init(8);
    FeedForward ff({.hidden_size = 4,
                    .intermediate_size = 6,
                    .activation = gated ? Activation::gelu_tanh : Activation::relu,
                    .bias = false,
                    .gated = gated,
                    .dtype = DType::f64,
                    .in_name = gated ? "wi_0" : "wi",
                    .out_name = "wo",
                    .gate_name = gated ? "wi_1" : ""},
                   init, std::make_shared<Generator>(9));
    heed::testing::spread_parameters(ff, 10, 0.5);
    EXPECT_EQ(ff.parameters().size(), gated ? 3u : 2u);  // no biases
    expect_gradcheck([&](const Inputs& x) { return ff.forward(x[0]); },
                     with_parameters({param({2, 3, 4}, 11)}, ff));
  }
}

namespace {

AttentionOptions t5_attention(DType dtype) {
  return {.embed_dim = 4,
          .num_heads = 2,
          .head_dim = 3,  // heads x d_kv = 6 != embed_dim
          .scale_scores = false,
          .bias = false,
          .dtype = dtype,
          .names = t5_attention_names()};
}

}  // namespace

// Self-attention adding the bias table by distance, padding and causal masks: the gradient
// reaches the projections and the table.
TEST(T5Gradcheck, AttentionWithTheBiasTable) {
  for (bool is_causal : {false, true}) {
    SCOPED_TRACE(is_causal ? "causal" : "bidirectional");
    Generator init(12);
    MultiHeadAttention attn(t5_attention(DType::f64), init, std::make_shared<Generator>(13));
    // 6 buckets, max distance 4: distances up to 3 reach the logarithmic and capped buckets.
    RelativeAttentionBias table(6, 4, 2, !is_causal, init, 0.5, DType::f64);
    heed::testing::spread_parameters(attn, 14, 0.5);
    heed::testing::spread_parameters(table, 15, 0.5);
    const Tensor mask = from_vector<int64_t>({1, 1, 1, 1, 1, 1, 1, 0}, {2, 4});
    Inputs inputs = with_parameters({param({2, 4, 4}, 16)}, attn);
    inputs.push_back(table.weight);
    expect_gradcheck(
        [&](const Inputs& x) {
          return attn
              .forward(x[0], {.key_padding_mask = mask,
                              .causal = is_causal,
                              .distance_bias = table.distance_bias(4, 4)})
              .output;
        },
        inputs);
  }
}

// scaled_dot_product_attention's distance bias against the same bias materialised as a
// [h, Tq, Tk] score_bias: outputs and every gradient, in f32 and with bf16 products, with
// padding and causal masks, and queries after cached keys (Tq < Tk).
TEST(T5Attention, DistanceBiasMatchesTheMaterialisedBias) {
  for (MatmulPrecision precision : {MatmulPrecision::f32, MatmulPrecision::bf16}) {
    heed::testing::MatmulPrecisionScope products(precision);
    for (bool is_causal : {false, true}) {
      for (auto [tq, tk] : {std::pair<int64_t, int64_t>{5, 5}, {2, 6}}) {
        SCOPED_TRACE(fmt::format("bf16 {} causal {} Tq {} Tk {}",
                                 precision == MatmulPrecision::bf16, is_causal, tq, tk));
        const Tensor q0 = random_tensor({2, 3, tq, 4}, 21, DType::f32);
        const Tensor k0 = random_tensor({2, 3, tk, 4}, 22, DType::f32);
        const Tensor v0 = random_tensor({2, 3, tk, 4}, 23, DType::f32);
        const Tensor bias0 = random_tensor({3, tq + tk - 1}, 24, DType::f32);
        const Tensor gy = random_tensor({2, 3, tq, 4}, 25, DType::f32);
        std::vector<uint8_t> keep(2 * tk, 1);
        keep.back() = 0;
        const Tensor mask = padding_mask_for_attention(from_vector<uint8_t>(keep, {2, tk}));
        auto run = [&](bool by_distance) {
          Tensor q = q0.detach().set_requires_grad(true), k = k0.detach().set_requires_grad(true);
          Tensor v = v0.detach().set_requires_grad(true);
          Tensor b = bias0.detach().set_requires_grad(true);
          ScaledDotProductOptions o{.mask = mask, .causal = is_causal, .scale = 1.0};
          if (by_distance) {
            o.distance_bias = b;
          } else {  // [h, Tq, Tk]: entry (i, j) is b[h, j - i + Tq - 1]
            std::vector<int64_t> at;
            for (int64_t i = 0; i < tq; ++i)
              for (int64_t j = 0; j < tk; ++j) at.push_back(j - i + tq - 1);
            Tensor rows =
                embedding(contiguous(transpose(b, 0, 1)), from_vector<int64_t>(at, {tq * tk}));
            o.score_bias = permute(reshape(rows, {tq, tk, 3}), {2, 0, 1});
          }
          Tensor out = scaled_dot_product_attention(q, k, v, o);
          sum(mul(out, gy)).backward();
          return std::vector<Tensor>{out, q.grad(), k.grad(), v.grad(), b.grad()};
        };
        const std::vector<Tensor> fused = run(true), reference = run(false);
        for (size_t i = 0; i < fused.size(); ++i)
          EXPECT_LT(max_relative_error(fused[i], reference[i]), 1e-5) << "output " << i;
      }
    }
  }
}

namespace {

T5Config tiny_t5(bool gated) {
  T5Config c;
  c.vocab_size = 20;
  c.d_model = 16;
  c.d_kv = 6;
  c.d_ff = 24;
  c.num_layers = 2;
  c.num_decoder_layers = 3;
  c.num_heads = 2;
  c.relative_attention_num_buckets = 8;
  c.relative_attention_max_distance = 6;
  c.dropout_rate = 0.0;
  c.feed_forward_proj = gated ? "gated-gelu" : "relu";
  c.tie_word_embeddings = !gated;
  return c;
}

Tensor ids(const std::vector<int64_t>& v, const Shape& s) {
  return from_vector<int64_t>(v, s);
}

}  // namespace

TEST(T5Model, HuggingFaceNamesAndNoBiases) {
  T5ForConditionalGeneration v10(tiny_t5(false), 1), v11(tiny_t5(true), 1);
  std::set<std::string> names;
  for (auto& [name, t] : v11.named_parameters()) {
    names.insert(name);
    EXPECT_FALSE(name.ends_with(".bias")) << name;
  }
  for (const char* expected :
       {"shared.weight", "encoder.block.0.layer.0.SelfAttention.q.weight",
        "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight",
        "encoder.block.1.layer.0.layer_norm.weight",
        "encoder.block.1.layer.1.DenseReluDense.wi_0.weight",
        "encoder.block.1.layer.1.DenseReluDense.wi_1.weight",
        "encoder.block.1.layer.1.DenseReluDense.wo.weight", "encoder.final_layer_norm.weight",
        "decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight",
        "decoder.block.2.layer.1.EncDecAttention.o.weight",
        "decoder.block.2.layer.2.layer_norm.weight", "decoder.final_layer_norm.weight",
        "lm_head.weight"}) {
    EXPECT_TRUE(names.count(expected)) << expected;
  }
  EXPECT_FALSE(names.count("encoder.block.1.layer.0.SelfAttention.relative_attention_bias.weight"));
  EXPECT_EQ(v11.encoder->relative_attention_bias->weight.shape(), (Shape{8, 2}));
  const auto q = v11.encoder->encoder_blocks[0]->attention->q_proj->weight;
  EXPECT_EQ(q.shape(), (Shape{12, 16}));  // heads x d_kv = 12 from d_model 16
  std::set<std::string> tied;
  for (auto& [name, t] : v10.named_parameters()) tied.insert(name);
  EXPECT_FALSE(tied.count("lm_head.weight"));
  EXPECT_TRUE(tied.count("encoder.block.0.layer.1.DenseReluDense.wi.weight"));
}

// Hugging Face's _init_weights: the spread of each weight is its std (factor 1).
TEST(T5Model, InitialisationAsHuggingFace) {
  T5Config c = tiny_t5(true);
  c.vocab_size = 400;
  c.d_model = 64;
  c.d_kv = 16;
  c.d_ff = 256;
  c.num_heads = 4;
  T5ForConditionalGeneration model(c, 3);
  auto std_of = [](const Tensor& t) {
    const std::vector<float> v = t.to_vector<float>();
    double s = 0;
    for (float x : v) s += static_cast<double>(x) * x;
    return std::sqrt(s / static_cast<double>(v.size()));
  };
  const auto& block = *model.encoder->encoder_blocks[0];
  const std::vector<std::pair<Tensor, double>> expected{
      {model.shared->weight, 1.0},
      {model.lm_head->weight, 1.0},
      {block.attention->q_proj->weight, 1.0 / std::sqrt(64.0 * 16.0)},
      {block.attention->k_proj->weight, 1.0 / 8.0},
      {block.attention->v_proj->weight, 1.0 / 8.0},
      {block.attention->out_proj->weight, 1.0 / std::sqrt(64.0)},
      {block.feed_forward->in_proj->weight, 1.0 / 8.0},
      {block.feed_forward->gate_proj->weight, 1.0 / 8.0},
      {block.feed_forward->out_proj->weight, 1.0 / 16.0}};
  for (const auto& [t, want] : expected) EXPECT_NEAR(std_of(t), want, 0.05 * want);
  EXPECT_EQ(block.attention_norm->weight.to_vector<float>(), std::vector<float>(64, 1.0f));
}

// Decoding position by position through the cache (the bias of the new position alone) gives
// what one decoder pass over the whole target gives.
TEST(T5Model, DecodeWithACacheEqualsTheDecodePass) {
  for (DType dtype : {DType::f64, DType::f32}) {
    for (bool gated : {false, true}) {
      SCOPED_TRACE(fmt::format("{} {}", dtype, gated ? "v1.1" : "v1.0"));
      NoGradGuard no_grad;
      T5ForConditionalGeneration t5(tiny_t5(gated), 6, dtype);
      t5.eval();
      const Tensor source = ids({4, 9, 3, 12, 1, 7, 5, 1, 0, 0}, {2, 5});
      const Tensor source_mask = ids({1, 1, 1, 1, 1, 1, 1, 1, 0, 0}, {2, 5});
      const Tensor target = ids({0, 5, 11, 6, 2, 8, 3, 9, 0, 7, 7, 4, 13, 2, 6, 10}, {2, 8});
      const Tensor memory = t5.encode(source, source_mask);
      const Tensor full = t5.decode(target, memory, source_mask);
      KVCache cache;
      std::vector<Tensor> steps{
          t5.decode(target.slice(1, 0, 2).contiguous(), memory, source_mask, Tensor(), &cache)};
      for (int64_t t = 2; t < 8; ++t) {
        steps.push_back(t5.decode(target.slice(1, t, t + 1).contiguous(), memory, source_mask,
                                  Tensor(), &cache));
      }
      EXPECT_EQ(cache.length(), 8);
      EXPECT_LT(max_relative_error(concat(steps, 1), full), dtype == DType::f64 ? 1e-12 : 2e-5);
    }
  }
}

// A model directory both ways: config.json with Hugging Face's T5 fields, model.safetensors
// under its names; loading it back gives the same weights and logits.
TEST(T5Model, CheckpointRoundTrip) {
  for (bool gated : {false, true}) {
    const fs::path dir = fs::path(::testing::TempDir()) / (gated ? "heed_t5_v11" : "heed_t5_v10");
    fs::remove_all(dir);
    T5ForConditionalGeneration model(tiny_t5(gated), 7);
    model.eval();
    save_pretrained(model, dir.string());
    const nlohmann::json j = io::read_json_file((dir / "config.json").string());
    EXPECT_EQ(j.at("model_type"), "t5");
    EXPECT_EQ(j.at("architectures")[0], "T5ForConditionalGeneration");
    EXPECT_EQ(j.at("num_decoder_layers"), 3);
    EXPECT_EQ(j.at("d_kv"), 6);
    EXPECT_EQ(j.at("feed_forward_proj"), gated ? "gated-gelu" : "relu");
    EXPECT_EQ(j.at("tie_word_embeddings"), !gated);
    EXPECT_EQ(j.at("relative_attention_num_buckets"), 8);
    EXPECT_EQ(j.at("decoder_start_token_id"), 0);
    std::shared_ptr<PretrainedModel> loaded = from_pretrained(dir.string());
    loaded->eval();
    ASSERT_EQ(loaded->architecture(), "T5ForConditionalGeneration");
    const auto a = model.named_parameters(), b = loaded->named_parameters();
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].first, b[i].first);
      EXPECT_EQ(a[i].second.to_vector<float>(), b[i].second.to_vector<float>()) << a[i].first;
    }
    NoGradGuard no_grad;
    ModelInputs in;
    in.input_ids = ids({4, 9, 3, 1}, {1, 4});
    in.labels = ids({5, 6, 1}, {1, 3});
    EXPECT_EQ(model.forward(in).logits.to_vector<float>(),
              loaded->forward(in).logits.to_vector<float>());
  }
}

// Hugging Face's files may carry the tied copies of shared.weight and the cross-attention
// table that its model never had: they load, and carry nothing.
TEST(T5Model, IgnoresTiedCopiesAndTheStaleCrossAttentionTable) {
  T5ForConditionalGeneration model(tiny_t5(false), 8);
  for (const char* name :
       {"encoder.embed_tokens.weight", "decoder.embed_tokens.weight", "lm_head.weight",
        "decoder.block.0.layer.1.EncDecAttention.relative_attention_bias.weight"}) {
    EXPECT_TRUE(model.ignores_checkpoint_name(name)) << name;
  }
  T5ForConditionalGeneration untied(tiny_t5(true), 8);
  EXPECT_FALSE(untied.ignores_checkpoint_name("lm_head.weight"));
}

TEST(T5Model, BadConfigsAreClearErrors) {
  T5Config c = tiny_t5(false);
  c.feed_forward_proj = "swish";
  EXPECT_THROW(T5ForConditionalGeneration(c, 1), Error);
  c = tiny_t5(false);
  c.num_decoder_layers = 0;
  EXPECT_THROW(T5ForConditionalGeneration(c, 1), Error);
  c = tiny_t5(false);
  c.relative_attention_max_distance = 2;  // not past the 2 exact buckets of a direction
  EXPECT_THROW(T5ForConditionalGeneration(c, 1), Error);
}
