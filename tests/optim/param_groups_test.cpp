#include "optim/param_groups.h"

#include <gtest/gtest.h>

#include <set>

#include "nn/models/bert.h"
#include "nn/models/encoder_decoder.h"
#include "nn/models/gpt.h"
#include "optim/adamw.h"
#include "optim_test_util.h"

namespace heed::optim {
namespace {

using heed::testing::leaf;
using heed::testing::set_grad;

bool no_decay(const std::string& name, const Shape& shape) {
  return is_no_decay_parameter(name, zeros(shape));
}

TEST(ParamGroups, NoDecayOnBiasesAndLayerNormOfEachFamily) {
  const Shape vec{8}, mat{8, 8}, emb{30, 8};
  for (const char* name : {
           "bert.encoder.layer.0.attention.output.LayerNorm.weight",
           "bert.encoder.layer.0.attention.output.LayerNorm.bias",
           "bert.encoder.layer.0.attention.output.dense.bias",
           "bert.embeddings.LayerNorm.weight",
           "cls.predictions.bias",
           "transformer.h.0.ln_1.weight",
           "transformer.h.0.ln_2.weight",
           "transformer.ln_f.weight",
           "transformer.h.0.attn.c_attn.bias",
           "model.encoder.layers.0.self_attn_layer_norm.weight",
           "model.encoder.layers.0.final_layer_norm.weight",
           "model.decoder.layers.0.encoder_attn_layer_norm.weight",
           "model.encoder.layernorm_embedding.weight",
           "model.encoder.layers.0.self_attn.q_proj.bias",
       }) {
    EXPECT_TRUE(no_decay(name, vec)) << name;
  }
  // A bias that is not 1-D is still a bias.
  EXPECT_TRUE(no_decay("final_logits_bias", {1, 30}));
  for (const char* name : {
           "bert.encoder.layer.0.attention.self.query.weight",
           "bert.encoder.layer.0.attention.output.dense.weight",
           "transformer.h.0.attn.c_attn.weight",
           "model.encoder.layers.0.self_attn.q_proj.weight",
       }) {
    EXPECT_FALSE(no_decay(name, mat)) << name;
  }
  // Embeddings are decayed, as in Hugging Face.
  for (const char* name : {"bert.embeddings.word_embeddings.weight", "transformer.wte.weight",
                           "transformer.wpe.weight", "model.shared.weight"}) {
    EXPECT_FALSE(no_decay(name, emb)) << name;
  }
}

// Hugging Face's name rule, spelled out for the names heed's models produce.
bool hf_no_decay(const std::string& name) {
  for (const char* marker :
       {"LayerNorm.", "layer_norm.", "layernorm_embedding.", ".ln_1.", ".ln_2.", "ln_f."}) {
    if (name.find(marker) != std::string::npos) return true;
  }
  return name.ends_with("bias");
}

void expect_groups_follow_hf(const nn::NamedTensors& params) {
  std::vector<ParamGroup> groups = weight_decay_groups(params, 0.01);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(*groups[0].weight_decay, 0.01);
  EXPECT_EQ(*groups[1].weight_decay, 0.0);
  EXPECT_EQ(groups[0].params.size() + groups[1].params.size(), params.size());
  EXPECT_FALSE(groups[0].params.empty());
  EXPECT_FALSE(groups[1].params.empty());
  for (const auto& [name, p] : groups[0].params) EXPECT_FALSE(hf_no_decay(name)) << name;
  for (const auto& [name, p] : groups[1].params) EXPECT_TRUE(hf_no_decay(name)) << name;
}

TEST(ParamGroups, RealModelsMatchHuggingFaceNames) {
  nn::BertConfig bert;
  bert.vocab_size = 40;
  bert.hidden_size = 8;
  bert.num_hidden_layers = 2;
  bert.num_attention_heads = 2;
  bert.intermediate_size = 16;
  bert.max_position_embeddings = 16;
  expect_groups_follow_hf(nn::BertForMaskedLM(bert, 1).named_parameters());

  nn::GPT2Config gpt;
  gpt.vocab_size = 40;
  gpt.n_positions = 16;
  gpt.n_embd = 8;
  gpt.n_layer = 2;
  gpt.n_head = 2;
  expect_groups_follow_hf(nn::GPT(gpt, 1).named_parameters());

  nn::BartConfig bart;
  bart.vocab_size = 40;
  bart.max_position_embeddings = 16;
  bart.d_model = 8;
  bart.encoder_layers = bart.decoder_layers = 1;
  bart.encoder_attention_heads = bart.decoder_attention_heads = 2;
  bart.encoder_ffn_dim = bart.decoder_ffn_dim = 16;
  expect_groups_follow_hf(nn::EncoderDecoder(bart, 1).named_parameters());
}

TEST(ParamGroups, AdamWDecaysOnlyTheDecayGroup) {
  Tensor w = leaf<float>({1, 2, 3, 4}, {2, 2}), b = leaf<float>({1, 2}, {2});
  AdamW adamw(weight_decay_groups({{"dense.weight", w}, {"dense.bias", b}}, 0.5),
              {.lr = 0.1, .weight_decay = 0.0});
  set_grad(w, zeros({2, 2}));
  set_grad(b, zeros({2}));
  adamw.step();
  // Zero gradients leave only the decay: w * (1 - 0.1 * 0.5), b unchanged.
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{0.95f, 1.9f, 2.85f, 3.8f}));
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{1, 2}));
}

TEST(ParamGroups, PerGroupHyperParameters) {
  Tensor a = leaf<double>({0}, {1}), b = leaf<double>({0}, {1});
  AdamW adamw(
      std::vector<ParamGroup>{{{{"a", a}}, 0.1, {}, {}}, {{{"b", b}}, {}, 0.0, {{"eps", 1.0}}}},
      {.lr = 0.01});
  const auto& groups = adamw.param_groups();
  EXPECT_EQ(*groups[0].lr, 0.1);
  EXPECT_EQ(*groups[0].weight_decay, 0.01);  // the default
  EXPECT_EQ(groups[0].option("eps"), 1e-8);
  EXPECT_EQ(*groups[1].lr, 0.01);
  EXPECT_EQ(groups[1].option("eps"), 1.0);
  EXPECT_EQ(groups[1].option("beta2"), 0.999);
  set_grad(a, ones({1}, DType::f64));
  set_grad(b, ones({1}, DType::f64));
  adamw.step();
  // First step with g = 1: m_hat = 1, v_hat = 1, so p = -lr / (1 + eps).
  EXPECT_NEAR(a.to_vector<double>()[0], -0.1 / (1 + 1e-8), 1e-15);
  EXPECT_NEAR(b.to_vector<double>()[0], -0.01 / 2, 1e-15);
}

TEST(ParamGroups, RejectsDuplicates) {
  Tensor a = leaf<float>({0}, {1}), b = leaf<float>({0}, {1});
  EXPECT_THROW(AdamW(std::vector<ParamGroup>{{{{"a", a}}, {}, {}, {}}, {{{"a2", a}}, {}, {}, {}}}),
               Error);
  EXPECT_THROW(AdamW(NamedTensors{{"a", a}, {"a", b}}), Error);
}

}  // namespace
}  // namespace heed::optim
