// Float64 gradient checks of the Transformer layers and of a tiny instance of each model
// family end to end: from the loss to every parameter.
#include "autograd/grad_mode.h"
#include "nn/models/bert.h"
#include "nn/models/distilbert.h"
#include "nn/models/encoder_decoder.h"
#include "nn/models/gpt.h"
#include "support/module_test_util.h"
#include "support/test_util.h"

using namespace heed;
using namespace heed::nn;
using heed::testing::expect_gradcheck;
using heed::testing::param;
using heed::testing::spread_parameters;
using heed::testing::with_parameters;
using Inputs = std::vector<Tensor>;

namespace {

LayerOptions tiny_layer(bool norm_first) {
  LayerOptions o;
  o.attention = {.embed_dim = 4, .num_heads = 2, .dtype = DType::f64};
  o.feed_forward = {.hidden_size = 4, .intermediate_size = 6, .dtype = DType::f64};
  o.norm_first = norm_first;
  return o;
}

Tensor ids(const std::vector<int64_t>& v, const Shape& s) {
  return from_vector<int64_t>(v, s);
}

}  // namespace

TEST(Gradcheck, FeedForward) {
  Generator init(1);
  FeedForward ff({.hidden_size = 4, .intermediate_size = 6, .dtype = DType::f64}, init,
                 std::make_shared<Generator>(2));
  spread_parameters(ff, 3);
  expect_gradcheck([&](const Inputs& x) { return ff.forward(x[0]); },
                   with_parameters({param({2, 3, 4}, 4)}, ff));
}

TEST(Gradcheck, EncoderLayerPostLN) {
  Generator init(5);
  EncoderLayer layer(tiny_layer(false), init, std::make_shared<Generator>(6));
  spread_parameters(layer, 7);
  Tensor mask = ids({1, 1, 1, 1, 1, 0}, {2, 3});
  expect_gradcheck([&](const Inputs& x) { return layer.forward(x[0], {.padding_mask = mask}); },
                   with_parameters({param({2, 3, 4}, 8)}, layer));
}

TEST(Gradcheck, EncoderLayerPreLNCausal) {
  Generator init(9);
  EncoderLayer layer(tiny_layer(true), init, std::make_shared<Generator>(10));
  spread_parameters(layer, 11);
  expect_gradcheck([&](const Inputs& x) { return layer.forward(x[0], {.causal = true}); },
                   with_parameters({param({2, 3, 4}, 12)}, layer));
}

// With output rows the layer runs everything after attention on those rows alone; every
// position still feeds the keys and values, so the gradient reaches all of x.
TEST(Gradcheck, EncoderLayerOutputRows) {
  for (bool norm_first : {false, true}) {
    Generator init(30);
    EncoderLayer layer(tiny_layer(norm_first), init, std::make_shared<Generator>(31));
    spread_parameters(layer, 32);
    Tensor mask = ids({1, 1, 1, 1, 1, 0}, {2, 3});
    Tensor rows = ids({1, 3, 4}, {3});
    expect_gradcheck(
        [&](const Inputs& x) {
          return layer.forward(x[0], {.padding_mask = mask, .output_rows = rows});
        },
        with_parameters({param({2, 3, 4}, 33)}, layer));
  }
}

TEST(Gradcheck, DecoderLayer) {
  Generator init(13);
  DecoderLayer layer(tiny_layer(false), init, std::make_shared<Generator>(14));
  spread_parameters(layer, 15);
  Tensor memory_mask = ids({1, 1, 1, 1, 1, 1, 0, 0}, {2, 4});
  expect_gradcheck(
      [&](const Inputs& x) { return layer.forward(x[0], x[1], {.memory_mask = memory_mask}); },
      with_parameters({param({2, 3, 4}, 16), param({2, 4, 4}, 17)}, layer));
}

namespace {

BertConfig tiny_bert() {
  BertConfig c;
  c.vocab_size = 7;
  c.hidden_size = 4;
  c.num_hidden_layers = 1;
  c.num_attention_heads = 2;
  c.intermediate_size = 6;
  c.max_position_embeddings = 5;
  c.hidden_dropout_prob = 0.0;
  c.attention_probs_dropout_prob = 0.0;
  c.num_labels = 3;
  return c;
}

}  // namespace

TEST(Gradcheck, BertForMaskedLMEndToEnd) {
  BertForMaskedLM model(tiny_bert(), 20, DType::f64);
  spread_parameters(model, 21);
  ModelInputs in{.input_ids = ids({2, 5, 4, 3, 2, 6, 3, 0}, {2, 4}),
                 .attention_mask = ids({1, 1, 1, 1, 1, 1, 1, 0}, {2, 4}),
                 .token_type_ids = ids({0, 0, 1, 1, 0, 0, 0, 0}, {2, 4}),
                 .labels = ids({-100, 1, -100, -100, -100, 4, 5, -100}, {2, 4})};
  expect_gradcheck([&](const Inputs&) { return model.forward(in).loss; },
                   with_parameters({}, model));
}

TEST(Gradcheck, BertForMaskedLMOnlyLabeledLogits) {
  BertForMaskedLM model(tiny_bert(), 20, DType::f64);
  spread_parameters(model, 21);
  ModelInputs in{.input_ids = ids({2, 5, 4, 3, 2, 6, 3, 0}, {2, 4}),
                 .attention_mask = ids({1, 1, 1, 1, 1, 1, 1, 0}, {2, 4}),
                 .labels = ids({-100, 1, -100, -100, -100, 4, 5, -100}, {2, 4})};
  // The sparse head gives the dense head's loss, logits and gradients.
  ModelOutputs dense = model.forward(in);
  in.only_labeled_logits = true;
  ModelOutputs sparse = model.forward(in);
  EXPECT_NEAR(sparse.loss.item(), dense.loss.item(), 1e-12);
  EXPECT_EQ(sparse.logits.shape(), (Shape{3, 7}));
  EXPECT_EQ(sparse.labels.to_vector<int64_t>(), (std::vector<int64_t>{1, 4, 5}));
  Tensor dense_rows = dense.logits.reshape({8, 7});
  EXPECT_LT(heed::testing::max_relative_error(sparse.logits.select(0, 2), dense_rows.select(0, 6)),
            1e-12);
  expect_gradcheck([&](const Inputs&) { return model.forward(in).loss; },
                   with_parameters({}, model));
}

TEST(Gradcheck, BertForSequenceClassificationEndToEnd) {
  BertForSequenceClassification model(tiny_bert(), 22, DType::f64);
  spread_parameters(model, 23);
  ModelInputs in{.input_ids = ids({2, 5, 4, 3, 2, 6, 3, 0}, {2, 4}),
                 .attention_mask = ids({1, 1, 1, 1, 1, 1, 1, 0}, {2, 4}),
                 .labels = ids({2, 0}, {2})};
  expect_gradcheck([&](const Inputs&) { return model.forward(in).loss; },
                   with_parameters({}, model));
}

TEST(Gradcheck, BertForTokenClassificationEndToEnd) {
  BertForTokenClassification model(tiny_bert(), 24, DType::f64);
  spread_parameters(model, 25);
  ModelInputs in{.input_ids = ids({2, 5, 4, 3, 2, 6, 3, 0}, {2, 4}),
                 .attention_mask = ids({1, 1, 1, 1, 1, 1, 1, 0}, {2, 4}),
                 .labels = ids({-100, 1, 2, -100, -100, 0, -100, -100}, {2, 4})};
  expect_gradcheck([&](const Inputs&) { return model.forward(in).loss; },
                   with_parameters({}, model));
}

namespace {

DistilBertConfig tiny_distilbert() {
  DistilBertConfig c;
  c.vocab_size = 7;
  c.dim = 4;
  c.n_layers = 1;
  c.n_heads = 2;
  c.hidden_dim = 6;
  c.max_position_embeddings = 5;
  c.dropout = c.attention_dropout = c.seq_classif_dropout = 0.0;
  c.num_labels = 3;
  return c;
}

}  // namespace

TEST(Gradcheck, DistilBertForMaskedLMEndToEnd) {
  DistilBertForMaskedLM model(tiny_distilbert(), 30, DType::f64);
  spread_parameters(model, 31);
  ModelInputs in{.input_ids = ids({2, 5, 4, 3, 2, 6, 3, 0}, {2, 4}),
                 .attention_mask = ids({1, 1, 1, 1, 1, 1, 1, 0}, {2, 4}),
                 .labels = ids({-100, 1, -100, -100, -100, 4, 5, -100}, {2, 4})};
  expect_gradcheck([&](const Inputs&) { return model.forward(in).loss; },
                   with_parameters({}, model));
  in.only_labeled_logits = true;
  expect_gradcheck([&](const Inputs&) { return model.forward(in).loss; },
                   with_parameters({}, model));
}

// With the fixed sinusoidal table (a buffer: no parameter to check) and a ReLU feed-forward.
TEST(Gradcheck, DistilBertForSequenceClassificationEndToEnd) {
  DistilBertConfig c = tiny_distilbert();
  c.sinusoidal_pos_embds = true;
  c.activation = "relu";
  DistilBertForSequenceClassification model(c, 32, DType::f64);
  spread_parameters(model, 33);
  ModelInputs in{.input_ids = ids({2, 5, 4, 3, 2, 6, 3, 0}, {2, 4}),
                 .attention_mask = ids({1, 1, 1, 1, 1, 1, 1, 0}, {2, 4}),
                 .labels = ids({2, 0}, {2})};
  expect_gradcheck([&](const Inputs&) { return model.forward(in).loss; },
                   with_parameters({}, model));
}

TEST(Gradcheck, DistilBertForTokenClassificationEndToEnd) {
  DistilBertForTokenClassification model(tiny_distilbert(), 34, DType::f64);
  spread_parameters(model, 35);
  ModelInputs in{.input_ids = ids({2, 5, 4, 3, 2, 6, 3, 0}, {2, 4}),
                 .attention_mask = ids({1, 1, 1, 1, 1, 1, 1, 0}, {2, 4}),
                 .labels = ids({-100, 1, 2, -100, -100, 0, -100, -100}, {2, 4})};
  expect_gradcheck([&](const Inputs&) { return model.forward(in).loss; },
                   with_parameters({}, model));
}

namespace {

// A one-layer f64 GPT's loss, with the head as `outputs` asks for it, checked end to end.
void expect_gpt_gradcheck(HeadOutputs outputs, double label_smoothing) {
  GPT2Config c;
  c.vocab_size = 7;
  c.n_positions = 5;
  c.n_embd = 4;
  c.n_layer = 1;
  c.n_head = 2;
  c.n_inner = 6;
  c.resid_pdrop = c.embd_pdrop = c.attn_pdrop = 0.0;
  GPT model(c, 26, DType::f64);
  spread_parameters(model, 27);
  ModelInputs in{.input_ids = ids({1, 5, 4, 3, 2, 6, 3, 0}, {2, 4}),
                 .attention_mask = ids({1, 1, 1, 1, 1, 1, 1, 0}, {2, 4}),
                 .labels = ids({1, 5, 4, 3, 2, 6, 3, -100}, {2, 4}),
                 .label_smoothing = label_smoothing,
                 .head_outputs = outputs};
  expect_gradcheck([&](const Inputs&) { return model.forward(in).loss; },
                   with_parameters({}, model));
}

}  // namespace

TEST(Gradcheck, GPTEndToEnd) {
  expect_gpt_gradcheck(HeadOutputs::logits, 0.0);
}

TEST(Gradcheck, GPTEndToEndWithoutLogits) {
  // The training step's path: the head fused with the cross-entropy (linear_cross_entropy).
  expect_gpt_gradcheck(HeadOutputs::loss_only, 0.1);
}

TEST(Gradcheck, EncoderDecoderEndToEnd) {
  BartConfig c;
  c.vocab_size = 7;
  c.max_position_embeddings = 5;
  c.d_model = 4;
  c.encoder_layers = 1;
  c.decoder_layers = 1;
  c.encoder_attention_heads = 2;
  c.decoder_attention_heads = 2;
  c.encoder_ffn_dim = 6;
  c.decoder_ffn_dim = 6;
  c.dropout = 0.0;
  EncoderDecoder model(c, 28, DType::f64);
  spread_parameters(model, 29);
  ModelInputs in{.input_ids = ids({0, 5, 4, 2, 0, 6, 2, 1}, {2, 4}),
                 .attention_mask = ids({1, 1, 1, 1, 1, 1, 1, 0}, {2, 4}),
                 .labels = ids({4, 3, 2, 6, 2, -100}, {2, 3})};
  expect_gradcheck([&](const Inputs&) { return model.forward(in).loss; },
                   with_parameters({}, model));
}
