// DistilBERT: Hugging Face's names, the fixed sinusoidal table as a checkpoint buffer, config.json
// in DistilBERT's own fields, save -> load -> the same logits, errors that name the field, and the
// BERT -> DistilBERT names of a student initialised from a teacher (extract_distilbert.py).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>

#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "nn/models/config_json.h"
#include "nn/models/distilbert.h"
#include "nn/pretrained_io.h"
#include "support/module_test_util.h"
#include "support/test_util.h"

using namespace heed;
using namespace heed::nn;
namespace fs = std::filesystem;

namespace {

DistilBertConfig small_distilbert() {
  DistilBertConfig c;
  c.vocab_size = 40;
  c.dim = 16;
  c.n_layers = 2;
  c.n_heads = 2;
  c.hidden_dim = 32;
  c.max_position_embeddings = 12;
  c.num_labels = 3;
  c.id2label = {"neg", "neu", "pos"};
  return c;
}

std::map<std::string, Shape> shapes(const NamedTensors& named) {
  std::map<std::string, Shape> out;
  for (auto& [name, t] : named) out[name] = t.shape();
  return out;
}

std::string temp_dir(const std::string& name) {
  fs::path p = fs::path(::testing::TempDir()) / ("heed_distilbert_" + name);
  fs::remove_all(p);
  return p.string();
}

ModelInputs batch() {
  return {.input_ids = from_vector<int64_t>({2, 7, 9, 11, 3, 2, 5, 3, 0, 0}, {2, 5}),
          .attention_mask = from_vector<int64_t>({1, 1, 1, 1, 1, 1, 1, 1, 0, 0}, {2, 5})};
}

// Saved and loaded back through config.json and model.safetensors: the same tensors, the same
// logits bit for bit.
void expect_round_trip(PretrainedModel&& model, const std::string& name) {
  const std::string dir = temp_dir(name);
  save_pretrained(model, dir);
  std::shared_ptr<PretrainedModel> loaded = from_pretrained(dir);
  model.eval();
  loaded->eval();
  EXPECT_EQ(loaded->architecture(), model.architecture());
  EXPECT_EQ(shapes(loaded->named_parameters()), shapes(model.named_parameters()));
  EXPECT_EQ(shapes(loaded->named_buffers()), shapes(model.named_buffers()));
  NoGradGuard no_grad;
  const Tensor before = model.forward(batch()).logits, after = loaded->forward(batch()).logits;
  EXPECT_EQ(before.to_vector<float>(), after.to_vector<float>()) << name;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(DistilBert, MaskedLMHasHuggingFaceNames) {
  DistilBertConfig c = small_distilbert();
  c.n_layers = 1;
  DistilBertForMaskedLM model(c, 1);
  std::map<std::string, Shape> want{
      {"distilbert.embeddings.word_embeddings.weight", {40, 16}},
      {"distilbert.embeddings.position_embeddings.weight", {12, 16}},
      {"distilbert.embeddings.LayerNorm.weight", {16}},
      {"distilbert.embeddings.LayerNorm.bias", {16}},
      {"vocab_transform.weight", {16, 16}},
      {"vocab_transform.bias", {16}},
      {"vocab_layer_norm.weight", {16}},
      {"vocab_layer_norm.bias", {16}},
      {"vocab_projector.bias", {40}},
  };
  const std::string layer = "distilbert.transformer.layer.0.";
  for (const char* lin : {"q_lin", "k_lin", "v_lin", "out_lin"}) {
    want[layer + "attention." + lin + ".weight"] = {16, 16};
    want[layer + "attention." + lin + ".bias"] = {16};
  }
  for (const char* norm : {"sa_layer_norm", "output_layer_norm"}) {
    want[layer + norm + ".weight"] = {16};
    want[layer + norm + ".bias"] = {16};
  }
  want[layer + "ffn.lin1.weight"] = {32, 16};
  want[layer + "ffn.lin1.bias"] = {32};
  want[layer + "ffn.lin2.weight"] = {16, 32};
  want[layer + "ffn.lin2.bias"] = {16};
  EXPECT_EQ(shapes(model.named_parameters()), want);  // no token types, no pooler
  EXPECT_TRUE(model.named_buffers().empty());
  EXPECT_EQ(model.architecture(), "DistilBertForMaskedLM");
  EXPECT_EQ(model.model_type(), "distilbert");
  // vocab_projector's weight is the word embeddings: a checkpoint's copy carries nothing.
  EXPECT_TRUE(model.ignores_checkpoint_name("vocab_projector.weight"));
}

TEST(DistilBert, ClassifierHeadsHaveHuggingFaceNames) {
  DistilBertForSequenceClassification sequence(small_distilbert(), 2);
  const auto s = shapes(sequence.named_parameters());
  EXPECT_EQ(s.at("pre_classifier.weight"), (Shape{16, 16}));
  EXPECT_EQ(s.at("classifier.weight"), (Shape{3, 16}));
  EXPECT_EQ(s.count("distilbert.pooler.dense.weight"), 0u);
  EXPECT_EQ(s.count("distilbert.embeddings.token_type_embeddings.weight"), 0u);
  DistilBertForTokenClassification token(small_distilbert(), 3);
  EXPECT_EQ(shapes(token.named_parameters()).at("classifier.weight"), (Shape{3, 16}));
  EXPECT_EQ(token.architecture(), "DistilBertForTokenClassification");
}

// Hugging Face applies dropout to the feed-forward's output but not to the attention's.
TEST(DistilBert, NoDropoutOnTheAttentionOutput) {
  DistilBertForMaskedLM model(small_distilbert(), 4);
  for (const auto& layer : model.bert->layers) {
    EXPECT_EQ(layer->dropout->p, 0.0);
    EXPECT_EQ(layer->feed_forward->dropout->p, 0.1);
    EXPECT_EQ(layer->attention->options.dropout, 0.1);
  }
}

TEST(DistilBert, SinusoidalTableIsAFixedCheckpointBuffer) {
  DistilBertConfig c = small_distilbert();
  c.sinusoidal_pos_embds = true;
  DistilBertForSequenceClassification model(c, 5);
  const std::string name = "distilbert.embeddings.position_embeddings.weight";
  EXPECT_EQ(shapes(model.named_parameters()).count(name), 0u);  // never trained
  const auto buffers = shapes(model.named_buffers());
  ASSERT_EQ(buffers.count(name), 1u);
  EXPECT_EQ(buffers.at(name), (Shape{12, 16}));
  // In the checkpoint under Hugging Face's name, and loaded back from it.
  const std::string dir = temp_dir("sinusoidal");
  save_pretrained(model, dir);
  io::SafetensorsFile file((fs::path(dir) / "model.safetensors").string());
  ASSERT_TRUE(file.contains(name));
  EXPECT_EQ(file.get(name).to_vector<float>(),
            model.bert->embeddings->sinusoidal_table.to_vector<float>());
  expect_round_trip(std::move(model), "sinusoidal_logits");
}

// heed's table is the one transformers' create_sinusoidal_embeddings makes (the fixture holds it).
TEST(DistilBert, SinusoidalTableMatchesHuggingFaces) {
  io::SafetensorsFile file(std::string(HEED_FIXTURE_DIR) + "/distilbert_classify.safetensors");
  const Tensor want = file.get("distilbert.embeddings.position_embeddings.weight");
  DistilBertConfig c;
  c.vocab_size = 50;
  c.dim = want.size(1);
  c.max_position_embeddings = want.size(0);
  c.n_heads = 4;
  c.n_layers = 1;
  c.sinusoidal_pos_embds = true;
  DistilBertForSequenceClassification model(c, 6);
  EXPECT_LT(heed::testing::max_relative_error(model.bert->embeddings->sinusoidal_table, want),
            1e-6);
}

TEST(DistilBert, ConfigJsonHasDistilBertsFields) {
  DistilBertConfig c = small_distilbert();
  c.activation = "relu";
  c.seq_classif_dropout = 0.3;
  const std::string dir = temp_dir("config");
  save_pretrained(DistilBertForSequenceClassification(c, 7), dir);
  const nlohmann::json j = read_model_config(dir);
  EXPECT_EQ(j["model_type"], "distilbert");
  EXPECT_EQ(j["architectures"][0], "DistilBertForSequenceClassification");
  EXPECT_EQ(j["dim"], 16);
  EXPECT_EQ(j["n_layers"], 2);
  EXPECT_EQ(j["n_heads"], 2);
  EXPECT_EQ(j["hidden_dim"], 32);
  EXPECT_EQ(j["activation"], "relu");
  EXPECT_EQ(j["sinusoidal_pos_embds"], false);
  EXPECT_EQ(j["seq_classif_dropout"], 0.3);
  EXPECT_EQ(j["qa_dropout"], 0.1);
  EXPECT_EQ(j["tie_weights_"], true);
  EXPECT_EQ(j["id2label"]["2"], "pos");
  EXPECT_FALSE(j.contains("hidden_size"));  // BERT's names stay out
  EXPECT_FALSE(j.contains("num_labels"));   // derived from id2label, as transformers writes it
  const DistilBertConfig back = distilbert_config_from_json(j);
  EXPECT_EQ(back.dim, 16);
  EXPECT_EQ(back.activation, "relu");
  EXPECT_EQ(back.seq_classif_dropout, 0.3);
  EXPECT_EQ(back.num_labels, 3);
  EXPECT_EQ(back.id2label, c.id2label);
}

TEST(DistilBert, ConfigJsonDefaultsAreHuggingFaces) {
  const DistilBertConfig c = distilbert_config_from_json({{"model_type", "distilbert"}});
  EXPECT_EQ(c.vocab_size, 30522);
  EXPECT_EQ(c.dim, 768);
  EXPECT_EQ(c.n_layers, 6);
  EXPECT_EQ(c.n_heads, 12);
  EXPECT_EQ(c.hidden_dim, 3072);
  EXPECT_EQ(c.activation, "gelu");
  EXPECT_EQ(c.dropout, 0.1);
  EXPECT_EQ(c.attention_dropout, 0.1);
  EXPECT_EQ(c.max_position_embeddings, 512);
  EXPECT_FALSE(c.sinusoidal_pos_embds);
  EXPECT_EQ(c.seq_classif_dropout, 0.2);
  EXPECT_EQ(c.pad_token_id, 0);
  EXPECT_EQ(c.encoder_config().layer_norm_eps, 1e-12);
  EXPECT_EQ(declared_architecture({{"model_type", "distilbert"}}), "DistilBertForMaskedLM");
}

TEST(DistilBert, EveryHeadRoundTripsToTheSameLogits) {
  DistilBertConfig sinusoidal = small_distilbert();
  sinusoidal.sinusoidal_pos_embds = true;
  expect_round_trip(DistilBertForMaskedLM(small_distilbert(), 8), "mlm");
  expect_round_trip(DistilBertForSequenceClassification(small_distilbert(), 9), "sequence");
  expect_round_trip(DistilBertForTokenClassification(sinusoidal, 10), "token");
}

TEST(DistilBert, BadConfigNamesTheField) {
  DistilBertConfig c = small_distilbert();
  c.n_heads = 5;
  EXPECT_EQ(error_of([&] { DistilBertForMaskedLM model(c, 11); }),
            "DistilBertConfig: n_heads 5 does not divide dim 16");
  c = small_distilbert();
  c.activation = "swish";
  EXPECT_NE(error_of([&] {
              DistilBertForTokenClassification model(c, 12);
            }).find("DistilBertConfig: activation unknown activation 'swish'"),
            std::string::npos);
  c = small_distilbert();
  c.seq_classif_dropout = 1.0;
  EXPECT_EQ(error_of([&] { DistilBertForSequenceClassification model(c, 13); }),
            "DistilBertConfig: seq_classif_dropout must be in [0, 1), got 1");
  c = small_distilbert();
  EXPECT_NE(error_of([&] {
              DistilBertForMaskedLM model(c, 14);
              model.forward({.input_ids = zeros({1, 13}, DType::i64)});
            }).find("13 tokens is longer than max_position_embeddings 12"),
            std::string::npos);
}

// --- a student from a teacher ---

TEST(DistilBert, BertNamesBecomeTheStudentsAsExtractDistilbertDoes) {
  const std::vector<int64_t> map{0, 2, 4, 7, 9, 11};
  auto name = [&](const std::string& bert) { return distilbert_name_from_bert(bert, map); };
  EXPECT_EQ(name("bert.embeddings.word_embeddings.weight"),
            "distilbert.embeddings.word_embeddings.weight");
  EXPECT_EQ(name("bert.embeddings.position_embeddings.weight"),
            "distilbert.embeddings.position_embeddings.weight");
  EXPECT_EQ(name("bert.embeddings.LayerNorm.bias"), "distilbert.embeddings.LayerNorm.bias");
  EXPECT_EQ(name("bert.encoder.layer.7.attention.self.query.weight"),
            "distilbert.transformer.layer.3.attention.q_lin.weight");
  EXPECT_EQ(name("bert.encoder.layer.0.attention.self.key.bias"),
            "distilbert.transformer.layer.0.attention.k_lin.bias");
  EXPECT_EQ(name("bert.encoder.layer.2.attention.self.value.weight"),
            "distilbert.transformer.layer.1.attention.v_lin.weight");
  EXPECT_EQ(name("bert.encoder.layer.4.attention.output.dense.weight"),
            "distilbert.transformer.layer.2.attention.out_lin.weight");
  EXPECT_EQ(name("bert.encoder.layer.9.attention.output.LayerNorm.weight"),
            "distilbert.transformer.layer.4.sa_layer_norm.weight");
  EXPECT_EQ(name("bert.encoder.layer.11.intermediate.dense.bias"),
            "distilbert.transformer.layer.5.ffn.lin1.bias");
  EXPECT_EQ(name("bert.encoder.layer.11.output.dense.weight"),
            "distilbert.transformer.layer.5.ffn.lin2.weight");
  EXPECT_EQ(name("bert.encoder.layer.11.output.LayerNorm.bias"),
            "distilbert.transformer.layer.5.output_layer_norm.bias");
  EXPECT_EQ(name("cls.predictions.transform.dense.weight"), "vocab_transform.weight");
  EXPECT_EQ(name("cls.predictions.transform.LayerNorm.bias"), "vocab_layer_norm.bias");
  EXPECT_EQ(name("cls.predictions.bias"), "vocab_projector.bias");
  EXPECT_EQ(name("cls.predictions.decoder.bias"), "vocab_projector.bias");  // its alias
  // A base model's names without `bert.`.
  EXPECT_EQ(name("encoder.layer.2.output.dense.weight"),
            "distilbert.transformer.layer.1.ffn.lin2.weight");
  EXPECT_EQ(name("embeddings.word_embeddings.weight"),
            "distilbert.embeddings.word_embeddings.weight");
  // What the student does not take.
  for (const char* dropped :
       {"bert.embeddings.token_type_embeddings.weight", "bert.encoder.layer.1.output.dense.weight",
        "bert.encoder.layer.12.output.dense.weight", "bert.pooler.dense.weight",
        "cls.predictions.decoder.weight", "cls.seq_relationship.weight", "classifier.weight",
        "bert.encoder.layer.0.attention.self.distance_embedding.weight",
        "bert.encoder.layer.x.output.dense.weight"}) {
    EXPECT_EQ(name(dropped), std::nullopt) << dropped;
  }
  EXPECT_NE(error_of([] {
              const std::vector<int64_t> twice{0, 2, 2};
              distilbert_name_from_bert("cls.predictions.bias", twice);
            }).find("teacher layer 2 is named twice"),
            std::string::npos);
}

// Every tensor of a student has one source in the teacher, of its shape, and the two directions
// agree; a student whose layers are all of the teacher's, with the teacher's token types at zero,
// is the teacher: the same logits.
TEST(DistilBert, StudentFromTeacherComputesTheTeachersFunction) {
  BertConfig t;
  t.vocab_size = 40;
  t.hidden_size = 16;
  t.num_hidden_layers = 2;
  t.num_attention_heads = 2;
  t.intermediate_size = 32;
  t.max_position_embeddings = 12;
  t.hidden_dropout_prob = t.attention_probs_dropout_prob = 0.0;
  BertForMaskedLM teacher(t, 15);
  heed::testing::spread_parameters(teacher, 16, 0.3);
  DistilBertConfig s = small_distilbert();
  s.dropout = s.attention_dropout = 0.0;
  DistilBertForMaskedLM student(s, 17);

  const std::vector<int64_t> map{0, 1};
  std::map<std::string, Tensor> teacher_tensors;
  for (auto& [name, tensor] : teacher.named_parameters()) teacher_tensors[name] = tensor;
  std::set<std::string> filled;
  NoGradGuard no_grad;
  for (auto& [name, tensor] : teacher.named_parameters()) {
    const auto target = distilbert_name_from_bert(name, map);
    if (!target) continue;
    EXPECT_EQ(bert_name_for_distilbert(*target, map), name);
    EXPECT_TRUE(filled.insert(*target).second) << *target << " filled twice";
  }
  for (auto& [name, tensor] : student.named_parameters()) {
    const auto source = bert_name_for_distilbert(name, map);
    ASSERT_TRUE(source.has_value()) << name;
    EXPECT_EQ(filled.count(name), 1u) << name;
    ASSERT_EQ(teacher_tensors.at(*source).shape(), tensor.shape()) << name;
    tensor.copy_(teacher_tensors.at(*source));
  }
  teacher.bert->embeddings->token_type_embeddings->weight.fill_(0.0);
  teacher.eval();
  student.eval();
  const Tensor want = teacher.forward(batch()).logits, got = student.forward(batch()).logits;
  EXPECT_LT(heed::testing::max_relative_error(got, want), 1e-6);
}
