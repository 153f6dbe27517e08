// Model structure: Hugging Face parameter names and shapes, tied weights, masks.
#include <gtest/gtest.h>

#include <map>
#include <utility>

#include "autograd/grad_mode.h"
#include "nn/models/bert.h"
#include "nn/models/encoder_decoder.h"
#include "nn/models/gpt.h"
#include "support/test_util.h"

using namespace heed;
using namespace heed::nn;

namespace {

std::map<std::string, Shape> shapes(const Module& m) {
  std::map<std::string, Shape> out;
  for (auto& [name, t] : m.named_parameters()) out[name] = t.shape();
  return out;
}

GPT2Config small_gpt(int64_t vocab_size) {
  GPT2Config c;
  c.vocab_size = vocab_size;
  c.n_positions = 8;
  c.n_embd = 16;
  c.n_layer = 2;
  c.n_head = 2;
  return c;
}

// Two rows of five ids for a vocabulary of 40, and their next-token labels (one ignored).
std::pair<Tensor, Tensor> gpt_batch() {
  return {from_vector<int64_t>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {2, 5}),
          from_vector<int64_t>({2, 3, 4, 5, -100, 7, 8, 9, 10, 39}, {2, 5})};
}

BertConfig small_bert() {
  BertConfig c;
  c.vocab_size = 50;
  c.hidden_size = 32;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 4;
  c.intermediate_size = 64;
  c.max_position_embeddings = 16;
  c.num_labels = 3;
  return c;
}

}  // namespace

TEST(Models, BertForMaskedLMHasHuggingFaceNamesAndTiedDecoder) {
  BertForMaskedLM model(small_bert(), 1);
  auto s = shapes(model);
  EXPECT_EQ(s.at("bert.embeddings.word_embeddings.weight"), (Shape{50, 32}));
  EXPECT_EQ(s.at("bert.embeddings.position_embeddings.weight"), (Shape{16, 32}));
  EXPECT_EQ(s.at("bert.embeddings.token_type_embeddings.weight"), (Shape{2, 32}));
  EXPECT_EQ(s.at("bert.embeddings.LayerNorm.weight"), (Shape{32}));
  EXPECT_EQ(s.at("bert.encoder.layer.1.attention.self.query.weight"), (Shape{32, 32}));
  EXPECT_EQ(s.at("bert.encoder.layer.1.attention.output.dense.bias"), (Shape{32}));
  EXPECT_EQ(s.at("bert.encoder.layer.1.attention.output.LayerNorm.bias"), (Shape{32}));
  EXPECT_EQ(s.at("bert.encoder.layer.0.intermediate.dense.weight"), (Shape{64, 32}));
  EXPECT_EQ(s.at("bert.encoder.layer.0.output.dense.weight"), (Shape{32, 64}));
  EXPECT_EQ(s.at("bert.encoder.layer.0.output.LayerNorm.weight"), (Shape{32}));
  EXPECT_EQ(s.at("cls.predictions.transform.dense.weight"), (Shape{32, 32}));
  EXPECT_EQ(s.at("cls.predictions.transform.LayerNorm.weight"), (Shape{32}));
  EXPECT_EQ(s.at("cls.predictions.bias"), (Shape{50}));
  EXPECT_EQ(s.count("bert.pooler.dense.weight"), 0u);
  EXPECT_EQ(s.size(), 5u + 2 * 16 + 5);  // embeddings, 2 layers of 16, the MLM head
  // No parameter name carries a stray dot or a `dropout` part.
  for (auto& [name, shape] : s) {
    EXPECT_EQ(name.find(".."), std::string::npos) << name;
    EXPECT_EQ(name.find("dropout"), std::string::npos) << name;
  }
}

TEST(Models, BertClassifierHasPoolerAndClassifier) {
  BertForSequenceClassification model(small_bert(), 2);
  auto s = shapes(model);
  EXPECT_EQ(s.at("bert.pooler.dense.weight"), (Shape{32, 32}));
  EXPECT_EQ(s.at("classifier.weight"), (Shape{3, 32}));
  ModelInputs in{.input_ids = from_vector<int64_t>({2, 7, 9, 3, 2, 8, 3, 0}, {2, 4})};
  EXPECT_EQ(model.forward(in).logits.shape(), (Shape{2, 3}));
}

TEST(Models, GPTHasGPT2NamesAndConv1DLayout) {
  GPT2Config c;
  c.vocab_size = 56;
  c.n_positions = 16;
  c.n_embd = 32;
  c.n_layer = 2;
  c.n_head = 4;
  GPT model(c, 3);
  auto s = shapes(model);
  EXPECT_EQ(s.at("transformer.wte.weight"), (Shape{56, 32}));
  EXPECT_EQ(s.at("transformer.wpe.weight"), (Shape{16, 32}));
  EXPECT_EQ(s.at("transformer.h.0.ln_1.weight"), (Shape{32}));
  EXPECT_EQ(s.at("transformer.h.0.attn.c_attn.weight"), (Shape{32, 96}));
  EXPECT_EQ(s.at("transformer.h.0.attn.c_attn.bias"), (Shape{96}));
  EXPECT_EQ(s.at("transformer.h.1.attn.c_proj.weight"), (Shape{32, 32}));
  EXPECT_EQ(s.at("transformer.h.1.mlp.c_fc.weight"), (Shape{32, 128}));
  EXPECT_EQ(s.at("transformer.h.1.mlp.c_proj.weight"), (Shape{128, 32}));
  EXPECT_EQ(s.at("transformer.ln_f.bias"), (Shape{32}));
  EXPECT_EQ(s.size(), 2u + 2 * 12 + 2);
}

TEST(Models, GPTInitScalesResidualProjections) {
  GPT2Config c;
  c.vocab_size = 64;
  c.n_embd = 128;
  c.n_layer = 8;
  c.n_head = 4;
  c.n_positions = 16;
  GPT model(c, 4);
  auto std_of = [](const Tensor& t) {
    std::vector<float> v = t.to_vector<float>();
    double s = 0;
    for (float x : v) s += x * x;
    return std::sqrt(s / v.size());
  };
  const double expected = 0.02 / std::sqrt(16.0);
  EXPECT_NEAR(std_of(model.blocks[0]->attention->out_proj->weight), expected, expected * 0.05);
  EXPECT_NEAR(std_of(model.blocks[0]->feed_forward->out_proj->weight), expected, expected * 0.05);
  EXPECT_NEAR(std_of(model.blocks[0]->feed_forward->in_proj->weight), 0.02, 0.02 * 0.05);
}

TEST(Models, EncoderDecoderHasBartNamesSharedEmbeddingsAndFinalLogitsBias) {
  BartConfig c;
  c.vocab_size = 48;
  c.max_position_embeddings = 16;
  c.d_model = 16;
  c.encoder_layers = 2;
  c.decoder_layers = 2;
  c.encoder_attention_heads = 2;
  c.decoder_attention_heads = 4;
  c.encoder_ffn_dim = 64;
  c.decoder_ffn_dim = 64;
  EncoderDecoder model(c, 5);
  auto s = shapes(model);
  EXPECT_EQ(s.at("model.shared.weight"), (Shape{48, 16}));
  EXPECT_EQ(s.count("model.encoder.embed_tokens.weight"), 0u);  // tied: listed once
  EXPECT_EQ(s.at("model.encoder.embed_positions.weight"), (Shape{18, 16}));
  EXPECT_EQ(s.at("model.decoder.layernorm_embedding.weight"), (Shape{16}));
  EXPECT_EQ(s.at("model.encoder.layers.1.self_attn.q_proj.weight"), (Shape{16, 16}));
  EXPECT_EQ(s.at("model.encoder.layers.1.fc1.weight"), (Shape{64, 16}));
  EXPECT_EQ(s.at("model.encoder.layers.1.final_layer_norm.weight"), (Shape{16}));
  EXPECT_EQ(s.at("model.decoder.layers.0.encoder_attn.out_proj.weight"), (Shape{16, 16}));
  EXPECT_EQ(s.at("model.decoder.layers.0.encoder_attn_layer_norm.bias"), (Shape{16}));
  EXPECT_EQ(s.count("final_logits_bias"), 0u);  // a buffer, not a parameter
  EXPECT_EQ(model.named_buffers().at(0).first, "final_logits_bias");
  Tensor shifted = model.shift_tokens_right(from_vector<int64_t>({5, 6, 2, 7, 2, -100}, {2, 3}));
  EXPECT_EQ(shifted.to_vector<int64_t>(), (std::vector<int64_t>{2, 5, 6, 2, 7, 2}));
}

TEST(Models, GPTIsCausalAndIgnoresPaddedPositions) {
  GPT model(small_gpt(20), 6);
  model.eval();
  Tensor a = from_vector<int64_t>({1, 2, 3, 4, 5}, {1, 5});
  Tensor b = from_vector<int64_t>({1, 2, 3, 9, 9}, {1, 5});
  std::vector<float> la = model.forward({.input_ids = a}).logits.to_vector<float>();
  std::vector<float> lb = model.forward({.input_ids = b}).logits.to_vector<float>();
  for (int i = 0; i < 3 * 20; ++i) EXPECT_EQ(la[i], lb[i]);
}

namespace {

// Builds a model twice (make()), runs forward(model, fast) with fast = false (the reference
// path) and true (the fast one) and expects the same loss and every parameter's gradient, to
// f32 rounding.
template <typename Make, typename Forward>
void expect_same_loss_and_gradients(Make make, Forward forward) {
  std::vector<std::vector<float>> grads[2];
  double losses[2];
  for (int fast = 0; fast < 2; ++fast) {
    auto model = make();
    ModelOutputs out = forward(model, fast == 1);
    losses[fast] = out.loss.item();
    out.loss.backward();
    for (auto& [name, p] : model.named_parameters()) {
      grads[fast].push_back(p.grad().template to_vector<float>());
    }
  }
  EXPECT_NEAR(losses[1], losses[0], 1e-6 * losses[0]);
  ASSERT_EQ(grads[0].size(), grads[1].size());
  auto largest = [](const std::vector<float>& v) {
    float m = 0;
    for (float g : v) m = std::max(m, std::abs(g));
    return m;
  };
  float model_largest = 0;
  for (const auto& g : grads[0]) model_largest = std::max(model_largest, largest(g));
  ASSERT_GT(model_largest, 0.0f);
  for (size_t i = 0; i < grads[0].size(); ++i) {
    ASSERT_GT(largest(grads[0][i]), 0.0f) << "parameter " << i;
    // A key bias's gradient is zero in exact arithmetic (softmax cancels it): what it holds is
    // round-off, measured against the model's gradients instead of its own.
    const float scale = std::max(largest(grads[0][i]), 1e-3f * model_largest);
    for (size_t j = 0; j < grads[0][i].size(); ++j) {
      EXPECT_NEAR(grads[1][i][j], grads[0][i][j], 1e-5 * scale) << "parameter " << i;
    }
  }
}

}  // namespace

TEST(Models, GPTLossWithoutLogitsIsTheSameLossAndGradients) {
  // HeadOutputs::loss_only fuses the head with the cross-entropy (what a training step runs):
  // the loss and every parameter's gradient agree with the logits path to f32 rounding.
  GPT2Config c = small_gpt(40);
  c.resid_pdrop = c.embd_pdrop = c.attn_pdrop = 0.0;
  const auto [ids, labels] = gpt_batch();
  expect_same_loss_and_gradients(
      [&] { return GPT(c, 9); },
      [&](const GPT& model, bool fused) {
        ModelOutputs out =
            model.forward({.input_ids = ids,
                           .labels = labels,
                           .label_smoothing = 0.1,
                           .head_outputs = fused ? HeadOutputs::loss_only : HeadOutputs::logits});
        EXPECT_EQ(out.logits.defined(), !fused);
        return out;
      });
}

TEST(Models, BertMaskedLMOnLabelledRowsIsTheSameLossAndGradients) {
  // only_labeled_logits (what a training step runs) computes the last layer after its
  // attention, and the head, on the labelled rows alone, padded from 17 to 18 rows with a
  // repeat labelled -100: the loss and every parameter's gradient agree with the path that
  // computes every row. The last layer's attention runs on 11 queries per sequence (the
  // most labelled rows in one) of 12, and with attention dropout it drops what attention
  // over every query drops in those rows.
  BertConfig c = small_bert();
  std::vector<int64_t> ids(24), mask(24, 1), labels(24, -100);
  for (int64_t i = 0; i < 24; ++i) ids[i] = (7 * i + 3) % 50;
  mask[22] = mask[23] = 0;
  for (int64_t i : {0, 1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 15, 17, 19, 21}) {
    labels[i] = (11 * i + 5) % 50;
  }
  c.hidden_dropout_prob = 0.0;
  for (double attention_dropout : {0.0, 0.3}) {
    SCOPED_TRACE(::testing::Message() << "attention dropout " << attention_dropout);
    c.attention_probs_dropout_prob = attention_dropout;
    expect_same_loss_and_gradients(
        [&] { return BertForMaskedLM(c, 11); },
        [&](const BertForMaskedLM& model, bool sparse) {
          ModelOutputs out = model.forward({.input_ids = from_vector<int64_t>(ids, {2, 12}),
                                            .attention_mask = from_vector<int64_t>(mask, {2, 12}),
                                            .labels = from_vector<int64_t>(labels, {2, 12}),
                                            .only_labeled_logits = sparse});
          EXPECT_EQ(out.logits.size(0), sparse ? 18 : 2);
          if (sparse) {
            const std::vector<int64_t> kept = out.labels.to_vector<int64_t>();
            EXPECT_EQ(kept[16], labels[21]);
            EXPECT_EQ(kept[17], -100);
          }
          return out;
        });
  }
}

TEST(Models, BertMaskedLMOnLabelledRowsOfOneSequence) {
  // Two labelled rows, both in the first sequence: the second computes a block of queries
  // that nothing reads (repeats of its first position), and the result is still the full
  // path's, with attention dropout on.
  BertConfig c = small_bert();
  c.hidden_dropout_prob = 0.0;
  c.attention_probs_dropout_prob = 0.3;
  std::vector<int64_t> ids(24), labels(24, -100);
  for (int64_t i = 0; i < 24; ++i) ids[i] = (5 * i + 1) % 50;
  labels[3] = 7;
  labels[8] = 41;
  expect_same_loss_and_gradients(
      [&] { return BertForMaskedLM(c, 12); },
      [&](const BertForMaskedLM& model, bool sparse) {
        return model.forward({.input_ids = from_vector<int64_t>(ids, {2, 12}),
                              .labels = from_vector<int64_t>(labels, {2, 12}),
                              .only_labeled_logits = sparse});
      });
}

TEST(Models, BertMaskedLMHeadWithoutLogitsIsTheSameLossAndGradients) {
  // HeadOutputs::loss_only runs the decoder (with its bias) and the loss as one op: the loss and
  // every parameter's gradient, the decoder bias's included, agree with the logits path.
  BertConfig c = small_bert();
  c.hidden_dropout_prob = c.attention_probs_dropout_prob = 0.0;
  std::vector<int64_t> ids(24), labels(24, -100);
  for (int64_t i = 0; i < 24; ++i) ids[i] = (7 * i + 3) % 50;
  for (int64_t i : {1, 4, 5, 9, 13, 20, 22}) labels[i] = (11 * i + 5) % 50;
  expect_same_loss_and_gradients(
      [&] { return BertForMaskedLM(c, 13); },
      [&](const BertForMaskedLM& model, bool fused) {
        ModelOutputs out =
            model.forward({.input_ids = from_vector<int64_t>(ids, {2, 12}),
                           .labels = from_vector<int64_t>(labels, {2, 12}),
                           .only_labeled_logits = true,
                           .label_smoothing = 0.1,
                           .head_outputs = fused ? HeadOutputs::loss_only : HeadOutputs::logits});
        EXPECT_EQ(out.logits.defined(), !fused);
        return out;
      });
}

TEST(Models, BertMaskedLMEvaluationGetsPredictionsWithoutLogits) {
  // HeadOutputs::predictions: the same loss, and each labelled row's arg max of the logits
  // the logits path returns, row for row with the labels it returns.
  BertForMaskedLM model(small_bert(), 14);
  model.eval();
  NoGradGuard no_grad;
  std::vector<int64_t> ids(24), labels(24, -100);
  for (int64_t i = 0; i < 24; ++i) ids[i] = (5 * i + 2) % 50;
  for (int64_t i : {0, 3, 7, 8, 15, 16, 23}) labels[i] = (3 * i + 1) % 50;
  const ModelInputs in{.input_ids = from_vector<int64_t>(ids, {2, 12}),
                       .labels = from_vector<int64_t>(labels, {2, 12}),
                       .only_labeled_logits = true};
  const ModelOutputs full = model.forward(in);
  ModelInputs fused_in = in;
  fused_in.head_outputs = HeadOutputs::predictions;
  const ModelOutputs fused = model.forward(fused_in);
  EXPECT_FALSE(fused.logits.defined());
  EXPECT_NEAR(fused.loss.item(), full.loss.item(), 1e-6 * full.loss.item());
  EXPECT_EQ(fused.labels.to_vector<int64_t>(), full.labels.to_vector<int64_t>());
  EXPECT_EQ(fused.predictions.to_vector<int64_t>(), argmax(full.logits, -1).to_vector<int64_t>());
}

TEST(Models, GPTEvaluationGetsPredictionsWithoutLogits) {
  // HeadOutputs::predictions (what evaluation asks for): the same loss, and each position's
  // arg max of the logits the default path returns.
  GPT model(small_gpt(40), 10);
  model.eval();
  NoGradGuard no_grad;
  const auto [ids, labels] = gpt_batch();
  const ModelOutputs full = model.forward({.input_ids = ids, .labels = labels});
  const ModelOutputs fused =
      model.forward({.input_ids = ids, .labels = labels, .head_outputs = HeadOutputs::predictions});
  EXPECT_FALSE(fused.logits.defined());
  EXPECT_NEAR(fused.loss.item(), full.loss.item(), 1e-6 * full.loss.item());
  ASSERT_EQ(fused.predictions.shape(), labels.shape());
  EXPECT_EQ(fused.predictions.to_vector<int64_t>(), argmax(full.logits, -1).to_vector<int64_t>());
}

TEST(Models, SequenceLongerThanPositionsIsAClearError) {
  BertForMaskedLM model(small_bert(), 7);
  Tensor too_long = zeros({1, 17}, DType::i64);
  try {
    model.forward({.input_ids = too_long});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("17 tokens is longer than max_position_embeddings 16"),
              std::string::npos)
        << e.what();
  }
}

TEST(Models, BadConfigNamesTheField) {
  BertConfig c = small_bert();
  c.num_attention_heads = 5;
  try {
    BertForMaskedLM model(c, 8);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("num_attention_heads 5 does not divide hidden_size 32"),
              std::string::npos)
        << e.what();
  }
}

TEST(Models, SinusoidalPositionsAreAFixedTableNotAParameter) {
  BertConfig c = small_bert();
  c.position_embedding_type = "sinusoidal";
  BertForMaskedLM model(c, 9);
  auto s = shapes(model);
  EXPECT_EQ(s.count("bert.embeddings.position_embeddings.weight"), 0u);
  Tensor table = model.bert->embeddings->sinusoidal_table;
  ASSERT_EQ(table.shape(), (Shape{16, 32}));
  std::vector<float> v = table.to_vector<float>();
  // Row 0: sin(0) = 0, cos(0) = 1; row 3, column 2: sin(3 / 10000^(2/32)).
  EXPECT_FLOAT_EQ(v[0], 0.0f);
  EXPECT_FLOAT_EQ(v[1], 1.0f);
  EXPECT_NEAR(v[3 * 32 + 2], std::sin(3.0 / std::pow(10000.0, 2.0 / 32)), 1e-6);
  ModelInputs in{.input_ids = from_vector<int64_t>({2, 7, 9, 3}, {1, 4})};
  EXPECT_EQ(model.forward(in).logits.shape(), (Shape{1, 4, 50}));
}
