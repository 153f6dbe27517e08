// Hugging Face-compatible model directories: save -> load round trips, prefix-less names,
// wrong architectures and shapes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "autograd/grad_mode.h"
#include "autograd/random.h"
#include "heed/version.h"
#include "nn/models/bert.h"
#include "nn/models/config_json.h"
#include "nn/models/encoder_decoder.h"
#include "nn/models/gpt.h"
#include "nn/pretrained_io.h"
#include "support/test_util.h"

using namespace heed;
using namespace heed::nn;
using namespace heed::io;
namespace fs = std::filesystem;

namespace {

std::string temp_dir(const std::string& name) {
  fs::path p = fs::path(::testing::TempDir()) / ("heed_checkpoint_" + name);
  fs::remove_all(p);
  return p.string();
}

BertConfig small_bert() {
  BertConfig c;
  c.vocab_size = 30;
  c.hidden_size = 16;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 2;
  c.intermediate_size = 32;
  c.max_position_embeddings = 12;
  c.num_labels = 3;
  c.id2label = {"neg", "neu", "pos"};
  return c;
}

void expect_same_tensors(const Module& a, const Module& b) {
  auto pa = a.named_parameters(), pb = b.named_parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (size_t i = 0; i < pa.size(); ++i) {
    EXPECT_EQ(pa[i].first, pb[i].first);
    EXPECT_EQ(pa[i].second.to_vector<float>(), pb[i].second.to_vector<float>()) << pa[i].first;
  }
  auto ba = a.named_buffers(), bb = b.named_buffers();
  ASSERT_EQ(ba.size(), bb.size());
  for (size_t i = 0; i < ba.size(); ++i) {
    EXPECT_EQ(ba[i].second.to_vector<float>(), bb[i].second.to_vector<float>()) << ba[i].first;
  }
}

template <typename M>
void round_trip(const M& model, const std::string& name) {
  const std::string dir = temp_dir(name);
  save_pretrained(model, dir);
  EXPECT_TRUE(fs::exists(fs::path(dir) / "config.json"));
  // Which heed wrote it (as transformers_version), and loading ignores the key.
  EXPECT_EQ(read_model_config(dir).value("heed_version", ""), std::string(heed::version()));
  std::shared_ptr<PretrainedModel> loaded = from_pretrained(dir);
  EXPECT_EQ(loaded->architecture(), model.architecture());
  expect_same_tensors(model, *loaded);
}

GPT2Config small_gpt() {
  GPT2Config c;
  c.vocab_size = 30;
  c.n_positions = 12;
  c.n_embd = 16;
  c.n_layer = 2;
  c.n_head = 2;
  return c;
}

BartConfig small_bart() {
  BartConfig c;
  c.vocab_size = 30;
  c.max_position_embeddings = 12;
  c.d_model = 16;
  c.encoder_layers = 1;
  c.decoder_layers = 2;
  c.encoder_attention_heads = 2;
  c.decoder_attention_heads = 4;
  c.encoder_ffn_dim = 32;
  c.decoder_ffn_dim = 32;
  return c;
}

}  // namespace

TEST(Checkpoint, EveryModelRoundTripsBitExactly) {
  round_trip(BertForMaskedLM(small_bert(), 1), "bert_mlm");
  round_trip(BertForSequenceClassification(small_bert(), 2), "bert_cls");
  round_trip(BertForTokenClassification(small_bert(), 3), "bert_tok");
  round_trip(GPT(small_gpt(), 4), "gpt");
  EncoderDecoder bart(small_bart(), 5);
  {
    NoGradGuard no_grad;
    Generator g(6);
    bart.final_logits_bias.copy_(randn({1, 30}, g));  // a buffer must round-trip too
  }
  round_trip(bart, "bart");
}

TEST(Checkpoint, ConfigJsonCarriesHuggingFaceFields) {
  const std::string dir = temp_dir("config");
  save_pretrained(BertForSequenceClassification(small_bert(), 1), dir);
  nlohmann::json j = read_model_config(dir);
  EXPECT_EQ(j["model_type"], "bert");
  EXPECT_EQ(j["architectures"][0], "BertForSequenceClassification");
  EXPECT_EQ(j["hidden_size"], 16);
  EXPECT_EQ(j["id2label"]["2"], "pos");
  EXPECT_EQ(j["label2id"]["neg"], 0);
  BertConfig back = bert_config_from_json(j);
  EXPECT_EQ(back.num_labels, 3);
  EXPECT_EQ(back.id2label, (std::vector<std::string>{"neg", "neu", "pos"}));
  SafetensorsFile weights((fs::path(dir) / "model.safetensors").string());
  EXPECT_EQ(weights.metadata().at("format"), "pt");
  EXPECT_TRUE(weights.contains("bert.encoder.layer.1.attention.self.query.weight"));
}

TEST(Checkpoint, LoadsNamesWithoutTheModelPrefix) {
  // Checkpoints such as the Hub's gpt2 leave off `transformer.`; BERT base models leave off
  // `bert.` and may spell LayerNorm parameters gamma/beta.
  BertForMaskedLM source(small_bert(), 7);
  NamedTensors renamed;
  for (auto& [name, t] : source.named_parameters()) {
    std::string n = name.rfind("bert.", 0) == 0 ? name.substr(5) : name;
    if (n.find("LayerNorm.weight") != std::string::npos) n.replace(n.size() - 6, 6, "gamma");
    if (n.find("LayerNorm.bias") != std::string::npos) n.replace(n.size() - 4, 4, "beta");
    renamed.emplace_back(n, t);
  }
  renamed.emplace_back("embeddings.position_ids", arange(0, 12));
  const std::string path = temp_dir("noprefix") + ".safetensors";
  save_safetensors(path, renamed);
  BertForMaskedLM target(small_bert(), 8);
  LoadReport r = load_weights(target, SafetensorsFile(path));
  EXPECT_TRUE(r.missing.empty());
  expect_same_tensors(source, target);

  GPT gpt_source(small_gpt(), 9);
  NamedTensors gpt_renamed;
  for (auto& [name, t] : gpt_source.named_parameters())
    gpt_renamed.emplace_back(name.substr(12), t);
  const std::string gpt_path = temp_dir("gpt_noprefix") + ".safetensors";
  save_safetensors(gpt_path, gpt_renamed);
  GPT gpt_target(small_gpt(), 10);
  load_weights(gpt_target, SafetensorsFile(gpt_path));
  expect_same_tensors(gpt_source, gpt_target);
}

TEST(Checkpoint, WrongArchitectureFailsNamingTheTensors) {
  const std::string dir = temp_dir("wrong_arch");
  save_pretrained(GPT(small_gpt(), 11), dir);
  BertForMaskedLM bert(small_bert(), 12);
  try {
    load_weights(bert, SafetensorsFile(dir + "/model.safetensors"));
    FAIL();
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("does not match BertForMaskedLM"), std::string::npos) << m;
    EXPECT_NE(m.find("missing [bert."), std::string::npos) << m;
    EXPECT_NE(m.find("transformer."), std::string::npos) << m;
  }
}

TEST(Checkpoint, WrongShapeFailsNamingTheParameterAndBothShapes) {
  const std::string dir = temp_dir("wrong_shape");
  save_pretrained(BertForMaskedLM(small_bert(), 13), dir);
  BertConfig bigger = small_bert();
  bigger.intermediate_size = 48;
  BertForMaskedLM target(bigger, 14);
  try {
    load_weights(target, SafetensorsFile(dir + "/model.safetensors"));
    FAIL();
  } catch (const Error& e) {
    const std::string m = e.what();
    // The first mismatch in name order is reported.
    EXPECT_NE(m.find("'bert.encoder.layer.0.intermediate.dense.bias' has shape [32] in the "
                     "checkpoint but [48] in the model"),
              std::string::npos)
        << m;
  }
}

TEST(Checkpoint, NonStrictLoadInitialisesANewHead) {
  // Fine-tuning: a classifier starts from an MLM checkpoint; the encoder is loaded, the
  // pooler and classifier keep their initialisation, the MLM head is reported unused.
  const std::string dir = temp_dir("finetune");
  BertForMaskedLM mlm(small_bert(), 15);
  save_pretrained(mlm, dir);
  BertForSequenceClassification cls(small_bert(), 16);
  LoadReport r = load_weights(cls, SafetensorsFile(dir + "/model.safetensors"), {.strict = false});
  EXPECT_EQ(r.missing,
            (std::vector<std::string>{"bert.pooler.dense.bias", "bert.pooler.dense.weight",
                                      "classifier.bias", "classifier.weight"}));
  EXPECT_EQ(r.unexpected.size(),
            5u);  // cls.predictions.{bias, transform.dense.*, transform.LayerNorm.*}
  EXPECT_EQ(cls.bert->layers[1]->final_norm->weight.to_vector<float>(),
            mlm.bert->layers[1]->final_norm->weight.to_vector<float>());
  EXPECT_THROW(load_weights(cls, SafetensorsFile(dir + "/model.safetensors")), Error);  // strict
}

TEST(Checkpoint, MissingDirectoryIsAClearError) {
  try {
    from_pretrained("/nonexistent/model");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/model/config.json: cannot open"),
              std::string::npos)
        << e.what();
  }
}

// Found by fuzz/json_files_fuzz.cpp: a config.json that is not an object, or whose model_type
// is not a string, let nlohmann's type_error ("cannot use value() with array") out of
// from_pretrained, a message that names neither the file nor the problem.
TEST(Checkpoint, ConfigJsonThatIsNotAnObjectIsAClearError) {
  const std::string dir = temp_dir("config_not_object");
  fs::create_directories(dir);
  std::ofstream(dir + "/config.json") << "[1]";
  try {
    from_pretrained(dir);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "config.json: expected a JSON object of model settings, not array"),
              std::string::npos)
        << e.what();
  }
  std::ofstream(dir + "/config.json") << R"({"model_type": 5})";
  EXPECT_EQ(declared_architecture(read_model_config(dir)), "model of unknown type");
  try {
    from_pretrained(dir);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unsupported architecture 'model of unknown type'"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(declared_architecture(nlohmann::json::array()), "model of unknown type");
  fs::remove_all(dir);
}

// Found by fuzz/json_files_fuzz.cpp: integer fields were read with get<int64_t>(), which cut
// 64.7 to 64 and is undefined for 1e300, and id2label with std::stoll and get<std::string>(),
// whose exceptions named neither the file nor the key.
TEST(Checkpoint, ConfigJsonNumbersAndLabelsAreChecked) {
  const auto error_of = [](const nlohmann::json& j) -> std::string {
    try {
      bert_config_from_json(j);
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_EQ(error_of({{"hidden_size", 1e300}}),
            "config.json: field 'hidden_size' must be an integer, not 1e+300");
  EXPECT_EQ(error_of({{"hidden_size", 64.7}}),
            "config.json: field 'hidden_size' must be an integer, not 64.7");
  EXPECT_EQ(error_of({{"hidden_size", "64"}}),
            "config.json: field 'hidden_size' must be an integer, not \"64\"");
  EXPECT_EQ(bert_config_from_json({{"hidden_size", 64.0}}).hidden_size, 64);  // a whole float
  EXPECT_EQ(error_of({{"id2label", {{"x", "a"}}}}),
            "config.json: id2label key 'x' is not a label id (0 to 0)");
  EXPECT_EQ(error_of({{"id2label", {{"1x", "a"}, {"0", "b"}}}}),
            "config.json: id2label key '1x' is not a label id (0 to 1)");
  EXPECT_EQ(error_of({{"id2label", {{"99999999999999999999", "a"}}}}),
            "config.json: id2label key '99999999999999999999' is not a label id (0 to 0)");
  EXPECT_EQ(error_of({{"id2label", {{"0", 1}}}}),
            "config.json: id2label['0'] must be a string, not number");
  EXPECT_EQ(error_of({{"id2label", {{"0", "a"}, {"00", "b"}}}}),
            "config.json: id2label has label id 0 twice ('00')");
  const BertConfig labelled = bert_config_from_json({{"id2label", {{"1", "spam"}, {"0", "ham"}}}});
  EXPECT_EQ(labelled.id2label, (std::vector<std::string>{"ham", "spam"}));
  EXPECT_EQ(labelled.num_labels, 2);
}
