// LoRA (nn/lora.h): the adapted Linear's gradients in f64, merging, freezing, PEFT's files.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <map>

#include "autograd/grad_mode.h"
#include "autograd/random.h"
#include "io/json_file.h"
#include "io/safetensors.h"
#include "nn/lora.h"
#include "nn/lora_files.h"
#include "nn/models/bert.h"
#include "nn/models/gpt.h"
#include "nn/pretrained_io.h"
#include "support/module_test_util.h"
#include "support/test_util.h"

using namespace heed;
using namespace heed::nn;
using heed::testing::expect_gradcheck;
using heed::testing::param;
using Inputs = std::vector<Tensor>;

namespace {

namespace fs = std::filesystem;

BertConfig small_bert() {
  BertConfig c;
  c.vocab_size = 50;
  c.hidden_size = 16;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 2;
  c.intermediate_size = 32;
  c.max_position_embeddings = 16;
  c.num_labels = 3;
  return c;
}

ModelInputs some_inputs() {
  return {.input_ids = from_vector<int64_t>({2, 7, 9, 3, 2, 8, 3, 0}, {2, 4}),
          .attention_mask = from_vector<int64_t>({1, 1, 1, 1, 1, 1, 1, 0}, {2, 4})};
}

// An adapter whose B is not zero (training's start), so that the update shows.
void spread_adapters(const Module& model, uint64_t seed) {
  Generator g(seed);
  NoGradGuard no_grad;
  for (auto& [name, t] : adapter_parameters(model)) {
    t.copy_(randn(t.shape(), g, t.dtype(), 0.0, 0.3));
  }
}

fs::path temp_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("heed_lora_test_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// That f throws an error whose message holds `text`.
void expect_error(const std::function<void()>& f, const std::string& text) {
  std::string message = "(no error)";
  try {
    f();
  } catch (const std::exception& e) {
    message = e.what();
  }
  EXPECT_NE(message.find(text), std::string::npos) << message;
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  const std::vector<float> x = a.contiguous().to_vector<float>(),
                           y = b.contiguous().to_vector<float>();
  EXPECT_EQ(x.size(), y.size());
  double m = 0;
  for (size_t i = 0; i < x.size(); ++i) m = std::max(m, std::abs(double(x[i]) - double(y[i])));
  return m;
}

}  // namespace

// x, A and B against central differences, with dropout on the adapter's input (its mask drawn
// afresh from the same generator state at each evaluation), in both weight layouts.
TEST(Lora, LinearGradcheckBothLayouts) {
  for (const WeightLayout layout : {WeightLayout::out_in, WeightLayout::in_out}) {
    Generator init(3);
    Linear layer(5, 4, init, true, 0.02, DType::f64, layout);
    heed::testing::spread_parameters(layer, 4, 0.5);
    auto dropout_gen = std::make_shared<Generator>(17);
    layer.lora = std::make_shared<LoraAdapter>(
        5, 4, LoraOptions{.r = 3, .alpha = 6, .dropout = 0.25}, init, DType::f64, dropout_gen);
    heed::testing::spread_parameters(*layer.lora, 5, 0.5);
    layer.weight.set_requires_grad(false);
    layer.bias.set_requires_grad(false);
    const Generator::State start = dropout_gen->state();
    expect_gradcheck(
        [&](const Inputs& x) {
          dropout_gen->set_state(start);
          return layer.forward(x[0]);
        },
        {param({2, 3, 5}, 6), layer.lora->lora_A, layer.lora->lora_B});
  }
}

TEST(Lora, AdapterStartsAtTheBaseModelWithPeftsInitialisation) {
  Generator init(1);
  Linear layer(64, 8, init);
  const Tensor x = randn({3, 64}, init);
  const Tensor before = layer.forward(x);
  layer.lora = std::make_shared<LoraAdapter>(64, 8, LoraOptions{}, init, DType::f32,
                                             std::make_shared<Generator>(2));
  EXPECT_EQ(layer.lora->lora_A.shape(), (Shape{8, 64}));
  EXPECT_EQ(layer.lora->lora_B.shape(), (Shape{8, 8}));
  EXPECT_DOUBLE_EQ(layer.lora->scaling, 1.0);  // PEFT's defaults: lora_alpha 8 / r 8
  for (float b : layer.lora->lora_B.to_vector<float>()) EXPECT_EQ(b, 0.0f);
  const double bound = 1.0 / std::sqrt(64.0);  // kaiming_uniform_(a=sqrt(5)) on [r, 64]
  double widest = 0;
  for (float a : layer.lora->lora_A.to_vector<float>())
    widest = std::max(widest, std::abs(double(a)));
  EXPECT_LE(widest, bound);
  EXPECT_GT(widest, 0.8 * bound);
  EXPECT_EQ(max_abs_diff(layer.forward(x), before), 0.0);
}

TEST(Lora, MergedEqualsUnmergedInBothLayouts) {
  for (const bool gpt : {false, true}) {
    std::shared_ptr<PretrainedModel> model;
    LoraSpec spec{.options = {.r = 4, .alpha = 16, .dropout = 0.1}};
    if (gpt) {
      GPT2Config c;
      c.vocab_size = 40;
      c.n_positions = 16;
      c.n_embd = 16;
      c.n_layer = 2;
      c.n_head = 2;
      model = std::make_shared<GPT>(c, 5);
      spec.target_modules = {"c_attn", "c_fc"};
    } else {
      model = std::make_shared<BertForSequenceClassification>(small_bert(), 5);
      spec.target_modules = {"query", "value", "intermediate.dense"};
    }
    Generator init(9);
    EXPECT_EQ(attach_lora(*model, spec, init).size(), gpt ? 4u : 6u);
    spread_adapters(*model, 10);
    model->eval();
    NoGradGuard no_grad;
    const ModelInputs in = some_inputs();
    const Tensor unmerged = model->forward(in).logits;
    merge_lora(*model);
    EXPECT_TRUE(adapter_parameters(*model).empty());
    EXPECT_LT(max_abs_diff(model->forward(in).logits, unmerged), 1e-5);
  }
}

TEST(Lora, BaseFrozenAdaptersAndModulesToSaveTrain) {
  BertForSequenceClassification model(small_bert(), 3);
  Generator init(4);
  attach_lora(model,
              {.target_modules = {"query", "value"}, .modules_to_save = {"classifier", "pooler"}},
              init);
  std::map<std::string, Tensor> trainable;
  for (auto& [name, t] : trainable_parameters(model)) trainable[name] = t;
  EXPECT_EQ(trainable.size(), 4u + 2 * 2 * 2);  // pooler + classifier; A, B on 2 x 2 Linears
  EXPECT_TRUE(trainable.count("bert.encoder.layer.1.attention.self.value.lora_B.weight"));
  EXPECT_TRUE(trainable.count("bert.pooler.dense.weight"));
  EXPECT_TRUE(trainable.count("classifier.bias"));
  EXPECT_FALSE(trainable.count("bert.encoder.layer.1.attention.self.value.weight"));

  spread_adapters(model, 5);
  ModelInputs in = some_inputs();
  in.labels = from_vector<int64_t>({0, 2}, {2});
  model.forward(in).loss.backward();
  for (auto& [name, t] : model.named_parameters()) {
    EXPECT_EQ(t.grad().defined(), trainable.count(name) > 0) << name;
  }
  for (auto& [name, t] : adapter_parameters(model)) EXPECT_TRUE(t.grad().defined()) << name;
}

TEST(Lora, KeysMatchAsPeftMatchesThem) {
  EXPECT_TRUE(module_matches("bert.encoder.layer.0.attention.self.query", "query"));
  EXPECT_TRUE(module_matches("bert.encoder.layer.0.attention.self.query", "self.query"));
  EXPECT_TRUE(module_matches("classifier", "classifier"));
  EXPECT_FALSE(module_matches("bert.encoder.layer.0.attention.self.query", "uery"));
  EXPECT_FALSE(module_matches("bert.encoder.layer.0.output.dense", "dense.weight"));
}

TEST(Lora, UnknownKeysAreErrorsNamingThem) {
  BertForSequenceClassification model(small_bert(), 3);
  Generator init(4);
  expect_error(
      [&] {
        attach_lora(model, {.target_modules = {"query", "q_proj"}}, init);
      },
      "lora.target_modules: 'q_proj' names no Linear module of "
      "BertForSequenceClassification");
  expect_error(
      [&] {
        attach_lora(model, {.target_modules = {"query"}, .modules_to_save = {"score"}}, init);
      },
      "lora.modules_to_save: 'score' names no module");
}

// adapter_config.json and adapter_model.safetensors as PEFT writes them (names under
// base_model.model., lora_A [r, in], lora_B [out, r], a modules_to_save head), made here by
// hand: applied to the base, the model computes what W + lora_alpha / r * B A computes.
TEST(Lora, LoadsAnAdapterInPeftsLayout) {
  const fs::path dir = temp_dir("peft_layout");
  BertForSequenceClassification base(small_bert(), 21);
  const std::string query = "bert.encoder.layer.1.attention.self.query";
  const int64_t r = 2, h = 16;
  Generator g(22);
  const Tensor A = randn({r, h}, g, DType::f32, 0, 0.5), B = randn({h, r}, g, DType::f32, 0, 0.5);
  const Tensor classifier = randn({3, h}, g, DType::f32, 0, 0.5);
  io::save_safetensors((dir / "adapter_model.safetensors").string(),
                       {{"base_model.model." + query + ".lora_A.weight", A},
                        {"base_model.model." + query + ".lora_B.weight", B},
                        {"base_model.model.classifier.weight", classifier}});
  io::write_json_file((dir / "adapter_config.json").string(),
                      {{"peft_type", "LORA"},
                       {"task_type", "SEQ_CLS"},
                       {"base_model_name_or_path", "bert-tiny"},
                       {"r", r},
                       {"lora_alpha", 8},
                       {"lora_dropout", 0.1},
                       {"target_modules", {"layer.1.attention.self.query"}},
                       {"modules_to_save", {"classifier"}},
                       {"bias", "none"},
                       {"fan_in_fan_out", false},
                       {"inference_mode", true},
                       {"use_rslora", false},
                       {"rank_pattern", nlohmann::json::object()}});

  // The expectation: the same base with W_query + 4 B A and the adapter's classifier weight,
  // the sum formed element by element here.
  BertForSequenceClassification expected(small_bert(), 21);
  {
    NoGradGuard no_grad;
    std::map<std::string, Tensor> p;
    for (auto& [name, t] : expected.named_parameters()) p[name] = t;
    std::vector<float> w = p.at(query + ".weight").to_vector<float>();
    const std::vector<float> a = A.to_vector<float>(), b = B.to_vector<float>();
    for (int64_t o = 0; o < h; ++o) {
      for (int64_t i = 0; i < h; ++i) {
        double update = 0;
        for (int64_t k = 0; k < r; ++k) update += double(b[o * r + k]) * a[k * h + i];
        w[o * h + i] += static_cast<float>(8.0 / r * update);
      }
    }
    p.at(query + ".weight").copy_(from_vector<float>(w, {h, h}));
    p.at("classifier.weight").copy_(classifier);
  }
  Generator init(0);
  EXPECT_EQ(apply_adapter(base, dir.string(), init), std::vector<std::string>{"classifier.weight"});
  base.eval();
  expected.eval();
  NoGradGuard no_grad;
  EXPECT_LT(
      max_abs_diff(base.forward(some_inputs()).logits, expected.forward(some_inputs()).logits),
      1e-5);
  fs::remove_all(dir);
}

TEST(Lora, WritesPeftsFiles) {
  const fs::path dir = temp_dir("writes");
  GPT2Config c;
  c.vocab_size = 40;
  c.n_positions = 16;
  c.n_embd = 16;
  c.n_layer = 1;
  c.n_head = 2;
  GPT model(c, 5);
  Generator init(6);
  const LoraSpec spec{.options = {.r = 4, .alpha = 16, .dropout = 0.05},
                      .target_modules = {"c_attn"}};
  attach_lora(model, spec, init);
  save_adapter(model, spec, "runs/gpt", dir.string());
  const nlohmann::json config = io::read_json_file((dir / "adapter_config.json").string());
  EXPECT_EQ(config["peft_type"], "LORA");
  EXPECT_EQ(config["task_type"], "CAUSAL_LM");
  EXPECT_EQ(config["r"], 4);
  EXPECT_EQ(config["lora_alpha"], 16);
  EXPECT_EQ(config["fan_in_fan_out"], true);  // GPT-2's Conv1D
  EXPECT_EQ(config["bias"], "none");
  EXPECT_TRUE(config["modules_to_save"].is_null());
  EXPECT_EQ(config["base_model_name_or_path"], "runs/gpt");
  const io::SafetensorsFile file((dir / "adapter_model.safetensors").string());
  EXPECT_EQ(file.names().size(), 2u);
  EXPECT_EQ(file.info("base_model.model.transformer.h.0.attn.c_attn.lora_A.weight").shape,
            (Shape{4, 16}));
  EXPECT_EQ(file.info("base_model.model.transformer.h.0.attn.c_attn.lora_B.weight").shape,
            (Shape{48, 4}));
  fs::remove_all(dir);
}

TEST(Lora, RefusesWhatItCannotApplyAsPeftWould) {
  const fs::path dir = temp_dir("refuses");
  const auto write = [&](nlohmann::json extra) {
    nlohmann::json config = {{"peft_type", "LORA"}, {"r", 2}, {"target_modules", {"query"}}};
    config.update(extra);
    io::write_json_file((dir / "adapter_config.json").string(), config);
  };
  write({{"bias", "all"}});
  expect_error([&] { read_adapter_config(dir.string()); }, "bias 'all' is not supported");
  write({{"target_modules", ".*query"}});
  expect_error([&] { read_adapter_config(dir.string()); }, "is a regular expression");
  write({{"use_dora", true}});
  expect_error([&] { read_adapter_config(dir.string()); }, "use_dora true is not supported");
  write({{"peft_type", "IA3"}});
  expect_error([&] { read_adapter_config(dir.string()); }, "peft_type is 'IA3'");
  fs::remove_all(dir);
}
