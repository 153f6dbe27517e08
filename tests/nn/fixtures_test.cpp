// The models against PyTorch: tiny BERT (MLM and classification), RoBERTa and DistilBERT (MLM,
// sequence and token classification), GPT-2, BART and T5 (v1.0 and v1.1) written by
// scripts/make_fixtures.py with their weights, inputs (padded batches), logits, loss and the
// gradient of every parameter. heed runs them in f32 and must match logits and loss within
// 1e-4 and every gradient within 1e-3 of the gradient's largest magnitude. With bf16 matrix
// products (train.dtype: bf16) each operand is rounded to 8 significant bits (a relative
// error of at most 2^-9, 0.2%), a few times per layer: logits and every gradient must then
// match within 3% of their largest magnitude, and the loss within 1%; a gradient that is zero
// in exact arithmetic (a key bias) within 3% of the model's largest gradient. Every layer's
// attention probabilities (output_attentions) must match within 1e-5 in f32 and 0.01 in bf16.
#include <gtest/gtest.h>

#include <cmath>

#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "nn/models/config_json.h"
#include "nn/pretrained_io.h"
#include "support/test_util.h"

using namespace heed;
using namespace heed::nn;
using namespace heed::io;

namespace {

std::string fixture(const std::string& name) {
  return std::string(HEED_FIXTURE_DIR) + "/" + name;
}

// Hugging Face's GPT-2 takes the input ids as labels and shifts them itself; heed's GPT
// takes them shifted (labels[t] = token t + 1), as its causal-LM collator makes them.
Tensor shifted_left(const Tensor& labels) {
  const int64_t B = labels.size(0), T = labels.size(1);
  std::vector<int64_t> ids = labels.to_vector<int64_t>(), out(ids.size(), -100);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t + 1 < T; ++t) out[b * T + t] = ids[b * T + t + 1];
  return from_vector<int64_t>(out, {B, T});
}

bool is_model_tensor(const std::string& name) {
  return name.rfind("input.", 0) != 0 && name.rfind("output.", 0) != 0 &&
         name.rfind("grad.", 0) != 0;
}

double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

void expect_close(const Tensor& got, const Tensor& want, double tolerance,
                  const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  double worst = 0;
  for (size_t i = 0; i < g.size(); ++i)
    worst = heed::testing::worse_of(worst, std::abs(g[i] - w[i]));
  EXPECT_LE(worst, tolerance) << what;
}

// Each layer's attention probabilities under `name` (output.attentions.0, ...): what
// output_attentions returns, and `infer attention` shows.
void expect_attentions(const SafetensorsFile& file, const std::string& name,
                       const std::vector<Tensor>& got, double tolerance) {
  size_t layers = 0;
  while (file.contains("output." + name + "." + std::to_string(layers))) ++layers;
  ASSERT_EQ(got.size(), layers) << name;
  for (size_t i = 0; i < layers; ++i) {
    const std::string what = name + "." + std::to_string(i);
    expect_close(got[i], file.get("output." + what), tolerance, what);
  }
}

struct Tolerance {
  double logits, loss, gradient;  // logits and gradients relative to their largest magnitude
  double attention;               // probabilities, absolute
};
constexpr Tolerance kF32{1e-4, 1e-4, 1e-3, 1e-5};
constexpr Tolerance kBf16{3e-2, 1e-2, 3e-2, 1e-2};

// The rows of [B, T, V] logits whose label is not -100, as [M, V]: what a masked-LM model
// returns with only_labeled_logits.
Tensor labelled_rows(const Tensor& logits, const Tensor& labels) {
  std::vector<int64_t> kept;
  const std::vector<int64_t> all = labels.to_vector<int64_t>();
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i] != -100) kept.push_back(static_cast<int64_t>(i));
  }
  const int64_t M = static_cast<int64_t>(kept.size());
  return embedding(logits.reshape({-1, logits.size(-1)}), from_vector<int64_t>(kept, {M}));
}

// Runs the fixture: load weights, forward, compare, backward, compare every gradient.
// only_labeled_logits runs the masked-LM path that training takes (the last layer and the
// head on the labelled rows alone) against the same PyTorch outputs.
void check_fixture(const std::string& file_name, MatmulPrecision precision = MatmulPrecision::f32,
                   bool only_labeled_logits = false) {
  const Tolerance tol = precision == MatmulPrecision::bf16 ? kBf16 : kF32;
  heed::testing::MatmulPrecisionScope products(precision);
  SafetensorsFile file(fixture(file_name));
  nlohmann::json config = nlohmann::json::parse(file.metadata().at("config"));
  std::shared_ptr<PretrainedModel> model = model_from_config(config, 0);
  LoadReport report = load_weights(*model, file, {.strict = true, .filter = is_model_tensor});
  EXPECT_TRUE(report.missing.empty());
  model->eval();

  ModelInputs in;
  in.input_ids = file.get("input.input_ids");
  in.attention_mask = file.get("input.attention_mask");
  in.labels = file.get("input.labels");
  if (config.value("model_type", "") == "gpt2") in.labels = shifted_left(in.labels);
  if (file.contains("input.token_type_ids")) in.token_type_ids = file.get("input.token_type_ids");
  if (file.contains("input.decoder_input_ids")) {
    in.decoder_input_ids = file.get("input.decoder_input_ids");
    in.decoder_attention_mask = file.get("input.decoder_attention_mask");
  }
  in.only_labeled_logits = only_labeled_logits;
  ModelOutputs out = model->forward(in);
  const Tensor want_logits = only_labeled_logits
                                 ? labelled_rows(file.get("output.logits"), in.labels)
                                 : file.get("output.logits");
  const double logit_scale = precision == MatmulPrecision::bf16
                                 ? max_abs(want_logits.to_vector<double>())
                                 : 1.0;  // f32: absolute, as the fixtures were first checked
  expect_close(out.logits, want_logits, tol.logits * logit_scale, "logits");
  const double want_loss = file.get("output.loss").item();
  EXPECT_NEAR(out.loss.item(), want_loss,
              precision == MatmulPrecision::bf16 ? tol.loss * std::abs(want_loss) : tol.loss);

  out.loss.backward();
  double largest_gradient = 0;
  for (auto& [name, param] : model->named_parameters()) {
    if (!file.contains("grad." + name)) continue;
    largest_gradient =
        std::max(largest_gradient, max_abs(file.get("grad." + name).to_vector<double>()));
  }
  int checked = 0;
  for (auto& [name, param] : model->named_parameters()) {
    if (!file.contains("grad." + name)) {
      // PyTorch gave it none: the forward does not use it (a relative model's absolute table).
      EXPECT_FALSE(param.grad().defined()) << name << " has a gradient PyTorch's has not";
      continue;
    }
    Tensor want = file.get("grad." + name);
    ASSERT_TRUE(param.grad().defined()) << name;
    // Relative to the gradient's largest magnitude, with a floor for gradients that are
    // zero in exact arithmetic (a key bias cancels in softmax: its stored gradient is
    // round-off noise of 1e-18).
    double scale = std::max(max_abs(want.to_vector<double>()), 1e-4);
    // In bf16 what such a gradient shows is the rounding of the products around it, whose
    // size is that of the model's gradients, not of the round-off in PyTorch's f32.
    if (precision == MatmulPrecision::bf16 && max_abs(want.to_vector<double>()) < 1e-12) {
      scale = largest_gradient;
    }
    expect_close(param.grad(), want, tol.gradient * scale, "grad." + name);
    ++checked;
  }
  EXPECT_GT(checked, 10);

  NoGradGuard no_grad;
  in.output_attentions = true;
  const ModelOutputs seen = model->forward(in);
  ASSERT_FALSE(seen.attentions.empty());
  expect_attentions(file, "attentions", seen.attentions, tol.attention);
  expect_attentions(file, "decoder_attentions", seen.decoder_attentions, tol.attention);
  expect_attentions(file, "cross_attentions", seen.cross_attentions, tol.attention);
}

}  // namespace

TEST(Fixtures, BertForMaskedLMMatchesPyTorch) {
  check_fixture("bert_mlm.safetensors");
}
TEST(Fixtures, BertForMaskedLMOnLabelledRowsMatchesPyTorch) {
  check_fixture("bert_mlm.safetensors", MatmulPrecision::f32, /*only_labeled_logits=*/true);
}
TEST(Fixtures, BertForSequenceClassificationMatchesPyTorch) {
  check_fixture("bert_classify.safetensors");
}
TEST(Fixtures, BertRelativeKeyQueryForMaskedLMMatchesPyTorch) {
  check_fixture("bert_mlm_relative.safetensors");
}
TEST(Fixtures, BertRelativeKeyForSequenceClassificationMatchesPyTorch) {
  check_fixture("bert_classify_relative.safetensors");
}
TEST(Fixtures, BertRelativeKeyQueryOnLabelledRowsMatchesPyTorch) {
  check_fixture("bert_mlm_relative.safetensors", MatmulPrecision::f32,
                /*only_labeled_logits=*/true);
}
TEST(Fixtures, RobertaForMaskedLMMatchesPyTorch) {
  check_fixture("roberta_mlm.safetensors");
}
TEST(Fixtures, RobertaForMaskedLMOnLabelledRowsMatchesPyTorch) {
  check_fixture("roberta_mlm.safetensors", MatmulPrecision::f32, /*only_labeled_logits=*/true);
}
TEST(Fixtures, RobertaForSequenceClassificationMatchesPyTorch) {
  check_fixture("roberta_classify.safetensors");
}
TEST(Fixtures, RobertaForTokenClassificationMatchesPyTorch) {
  check_fixture("roberta_token.safetensors");
}
TEST(Fixtures, DistilBertForMaskedLMMatchesPyTorch) {
  check_fixture("distilbert_mlm.safetensors");
}
TEST(Fixtures, DistilBertForMaskedLMOnLabelledRowsMatchesPyTorch) {
  check_fixture("distilbert_mlm.safetensors", MatmulPrecision::f32, /*only_labeled_logits=*/true);
}
TEST(Fixtures, DistilBertForSequenceClassificationMatchesPyTorch) {
  check_fixture("distilbert_classify.safetensors");
}
TEST(Fixtures, DistilBertForTokenClassificationMatchesPyTorch) {
  check_fixture("distilbert_token.safetensors");
}
TEST(Fixtures, GPT2MatchesPyTorch) {
  check_fixture("gpt2_lm.safetensors");
}
TEST(Fixtures, EncoderDecoderMatchesPyTorch) {
  check_fixture("bart.safetensors");
}

TEST(Fixtures, BertForMaskedLMMatchesPyTorchInBf16) {
  check_fixture("bert_mlm.safetensors", MatmulPrecision::bf16);
}
TEST(Fixtures, BertForMaskedLMOnLabelledRowsMatchesPyTorchInBf16) {
  check_fixture("bert_mlm.safetensors", MatmulPrecision::bf16, /*only_labeled_logits=*/true);
}
TEST(Fixtures, BertForSequenceClassificationMatchesPyTorchInBf16) {
  check_fixture("bert_classify.safetensors", MatmulPrecision::bf16);
}
TEST(Fixtures, BertRelativeKeyQueryForMaskedLMMatchesPyTorchInBf16) {
  check_fixture("bert_mlm_relative.safetensors", MatmulPrecision::bf16);
}
TEST(Fixtures, RobertaForMaskedLMMatchesPyTorchInBf16) {
  check_fixture("roberta_mlm.safetensors", MatmulPrecision::bf16);
}
TEST(Fixtures, RobertaForSequenceClassificationMatchesPyTorchInBf16) {
  check_fixture("roberta_classify.safetensors", MatmulPrecision::bf16);
}
TEST(Fixtures, RobertaForTokenClassificationMatchesPyTorchInBf16) {
  check_fixture("roberta_token.safetensors", MatmulPrecision::bf16);
}
TEST(Fixtures, DistilBertForMaskedLMMatchesPyTorchInBf16) {
  check_fixture("distilbert_mlm.safetensors", MatmulPrecision::bf16);
}
TEST(Fixtures, DistilBertForSequenceClassificationMatchesPyTorchInBf16) {
  check_fixture("distilbert_classify.safetensors", MatmulPrecision::bf16);
}
TEST(Fixtures, DistilBertForTokenClassificationMatchesPyTorchInBf16) {
  check_fixture("distilbert_token.safetensors", MatmulPrecision::bf16);
}
TEST(Fixtures, GPT2MatchesPyTorchInBf16) {
  check_fixture("gpt2_lm.safetensors", MatmulPrecision::bf16);
}
TEST(Fixtures, EncoderDecoderMatchesPyTorchInBf16) {
  check_fixture("bart.safetensors", MatmulPrecision::bf16);
}
TEST(Fixtures, T5V10MatchesPyTorch) {
  check_fixture("t5_v1_0.safetensors");
}
TEST(Fixtures, T5V11MatchesPyTorch) {
  check_fixture("t5_v1_1.safetensors");
}
TEST(Fixtures, T5V10MatchesPyTorchInBf16) {
  check_fixture("t5_v1_0.safetensors", MatmulPrecision::bf16);
}
TEST(Fixtures, T5V11MatchesPyTorchInBf16) {
  check_fixture("t5_v1_1.safetensors", MatmulPrecision::bf16);
}
