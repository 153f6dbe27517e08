// RoBERTa model directories: what heed writes is what transformers' RobertaConfig and
// RobertaFor* read (config.json's fields, the tensors' names), heed loads it back with the same
// logits, and it loads a directory laid out as Hugging Face writes one (the pooler of base
// checkpoints, the tied decoder, lm_head.decoder.bias for lm_head.bias, gamma and beta).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "autograd/random.h"
#include "io/safetensors.h"
#include "nn/models/config_json.h"
#include "nn/models/roberta.h"
#include "nn/pretrained_io.h"

using namespace heed;
using namespace heed::nn;
using namespace heed::io;
namespace fs = std::filesystem;

namespace {

std::string temp_dir(const std::string& name) {
  fs::path p = fs::path(::testing::TempDir()) / ("heed_roberta_checkpoint_" + name);
  fs::remove_all(p);
  return p.string();
}

RobertaConfig small_roberta() {
  RobertaConfig c;
  c.vocab_size = 40;
  c.hidden_size = 16;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 2;
  c.intermediate_size = 32;
  c.max_position_embeddings = 14;  // 12 tokens after <pad> = 1
  c.num_labels = 3;
  c.id2label = {"neg", "neu", "pos"};
  return c;
}

// Two rows, the second padded with <pad> (1): <s> ... </s> as RoBERTa's tokenizer makes them.
ModelInputs padded_batch() {
  ModelInputs in;
  in.input_ids = from_vector<int64_t>({0, 7, 8, 9, 10, 2, 0, 11, 12, 2, 1, 1}, {2, 6});
  in.attention_mask = from_vector<int64_t>({1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0}, {2, 6});
  in.token_type_ids = zeros({2, 6}, DType::i64);
  return in;
}

std::vector<float> logits_of(const PretrainedModel& model) {
  NoGradGuard no_grad;
  return model.forward(padded_batch()).logits.to_vector<float>();
}

// Every named tensor of `model`, renamed by `rename` (an empty name drops it).
NamedTensors renamed(const PretrainedModel& model,
                     const std::function<std::string(const std::string&)>& rename) {
  NamedTensors out;
  for (auto& [name, t] : model.named_parameters()) {
    const std::string n = rename(name);
    if (!n.empty()) out.emplace_back(n, t);
  }
  return out;
}

}  // namespace

TEST(RobertaCheckpoint, EveryHeadLoadsBackWithTheSameLogits) {
  std::vector<std::shared_ptr<PretrainedModel>> models = {
      std::make_shared<RobertaForMaskedLM>(small_roberta(), 1),
      std::make_shared<RobertaForSequenceClassification>(small_roberta(), 2),
      std::make_shared<RobertaForTokenClassification>(small_roberta(), 3)};
  for (const auto& model : models) {
    SCOPED_TRACE(model->architecture());
    model->eval();
    const std::string dir = temp_dir(model->architecture());
    save_pretrained(*model, dir);
    std::shared_ptr<PretrainedModel> loaded = from_pretrained(dir);
    EXPECT_EQ(loaded->architecture(), model->architecture());
    loaded->eval();
    EXPECT_EQ(logits_of(*loaded), logits_of(*model));
  }
}

// The fields RobertaConfig reads and the names RobertaFor* load: roberta.* for the encoder,
// lm_head.* (its decoder tied to the word embeddings, so not written, as transformers saves it)
// and classifier.dense / classifier.out_proj; no pooler, which these heads do not have.
TEST(RobertaCheckpoint, ConfigAndNamesAreHuggingFacesRoberta) {
  const std::string dir = temp_dir("names");
  save_pretrained(RobertaForMaskedLM(small_roberta(), 4), dir);
  const nlohmann::json j = read_model_config(dir);
  EXPECT_EQ(j["model_type"], "roberta");
  EXPECT_EQ(j["architectures"], nlohmann::json({"RobertaForMaskedLM"}));
  EXPECT_EQ(j["pad_token_id"], 1);
  EXPECT_EQ(j["type_vocab_size"], 1);
  EXPECT_EQ(j["layer_norm_eps"], 1e-5);
  EXPECT_EQ(j["max_position_embeddings"], 14);
  EXPECT_EQ(j["position_embedding_type"], "absolute");
  EXPECT_EQ(j["vocab_size"], 40);
  const RobertaConfig back = roberta_config_from_json(j);
  EXPECT_EQ(back.max_tokens(), 12);

  SafetensorsFile mlm((fs::path(dir) / "model.safetensors").string());
  for (const char* name :
       {"roberta.embeddings.word_embeddings.weight",
        "roberta.embeddings.position_embeddings.weight",
        "roberta.embeddings.token_type_embeddings.weight", "roberta.embeddings.LayerNorm.weight",
        "roberta.encoder.layer.1.attention.self.query.weight",
        "roberta.encoder.layer.1.attention.output.LayerNorm.bias",
        "roberta.encoder.layer.1.intermediate.dense.weight",
        "roberta.encoder.layer.1.output.dense.bias", "lm_head.dense.weight", "lm_head.dense.bias",
        "lm_head.layer_norm.weight", "lm_head.layer_norm.bias", "lm_head.bias"}) {
    EXPECT_TRUE(mlm.contains(name)) << name;
  }
  EXPECT_EQ(mlm.info("roberta.embeddings.token_type_embeddings.weight").shape, (Shape{1, 16}));
  EXPECT_EQ(mlm.info("roberta.embeddings.position_embeddings.weight").shape, (Shape{14, 16}));
  for (const std::string& name : mlm.names()) {
    EXPECT_FALSE(name.starts_with("lm_head.decoder")) << name;
    EXPECT_EQ(name.find("pooler"), std::string::npos) << name;
  }

  const std::string cls_dir = temp_dir("cls_names");
  save_pretrained(RobertaForSequenceClassification(small_roberta(), 5), cls_dir);
  const nlohmann::json cls_json = read_model_config(cls_dir);
  EXPECT_EQ(cls_json["architectures"], nlohmann::json({"RobertaForSequenceClassification"}));
  EXPECT_EQ(cls_json["id2label"]["2"], "pos");
  EXPECT_EQ(cls_json["label2id"]["neg"], 0);
  SafetensorsFile cls((fs::path(cls_dir) / "model.safetensors").string());
  for (const char* name : {"classifier.dense.weight", "classifier.dense.bias",
                           "classifier.out_proj.weight", "classifier.out_proj.bias"}) {
    EXPECT_TRUE(cls.contains(name)) << name;
  }
  EXPECT_EQ(cls.info("classifier.out_proj.weight").shape, (Shape{3, 16}));
}

// A directory as transformers writes one for roberta-base-like checkpoints: the pooler a base
// checkpoint carries, the tied decoder weight, the position_ids buffer, lm_head.decoder.bias for
// the bias, and the original checkpoints' LayerNorm gamma and beta. Strict loading takes it and
// gives the source model's logits.
TEST(RobertaCheckpoint, LoadsADirectoryAsHuggingFaceWritesIt) {
  RobertaForMaskedLM source(small_roberta(), 6);
  source.eval();
  NamedTensors tensors = renamed(source, [](const std::string& name) {
    std::string n = name;
    if (n == "lm_head.bias") return std::string("lm_head.decoder.bias");
    if (n.find("LayerNorm.weight") != std::string::npos) n.replace(n.size() - 6, 6, "gamma");
    if (n.find("LayerNorm.bias") != std::string::npos) n.replace(n.size() - 4, 4, "beta");
    return n;
  });
  Generator g(7);
  tensors.emplace_back("lm_head.decoder.weight", source.bert->embeddings->word_embeddings->weight);
  tensors.emplace_back("roberta.pooler.dense.weight", randn({16, 16}, g));
  tensors.emplace_back("roberta.pooler.dense.bias", randn({16}, g));
  tensors.emplace_back("roberta.embeddings.position_ids", arange(0, 14).reshape({1, 14}));
  const std::string dir = temp_dir("hf_layout");
  fs::create_directories(dir);
  save_safetensors((fs::path(dir) / "model.safetensors").string(), tensors, {{"format", "pt"}});
  nlohmann::json config = source.config_json();
  config.erase("heed_version");
  std::ofstream(fs::path(dir) / "config.json") << config.dump(2);

  std::shared_ptr<PretrainedModel> loaded = from_pretrained(dir);
  loaded->eval();
  EXPECT_EQ(logits_of(*loaded), logits_of(source));

  // The token head skips the pooler too; the sequence head (no pooler either: RoBERTa's reads
  // <s> through classifier.dense) loads the encoder and reports lm_head unused.
  RobertaForTokenClassification tagger(small_roberta(), 8);
  LoadReport r = load_weights(
      tagger, SafetensorsFile((fs::path(dir) / "model.safetensors").string()), {.strict = false});
  EXPECT_EQ(r.missing, (std::vector<std::string>{"classifier.bias", "classifier.weight"}));
  for (const std::string& name : r.unexpected) EXPECT_TRUE(name.starts_with("lm_head.")) << name;
}

// A checkpoint whose encoder is stored without the `roberta.` prefix (as RobertaModel saves
// itself) loads into every head.
TEST(RobertaCheckpoint, LoadsTheEncoderWithoutItsPrefix) {
  RobertaForMaskedLM source(small_roberta(), 9);
  NamedTensors bare = renamed(source, [](const std::string& name) {
    return name.starts_with("roberta.") ? name.substr(8) : std::string();
  });
  const std::string path = temp_dir("bare") + ".safetensors";
  save_safetensors(path, bare);
  RobertaForSequenceClassification cls(small_roberta(), 10);
  LoadReport r = load_weights(cls, SafetensorsFile(path), {.strict = false});
  EXPECT_EQ(r.missing,
            (std::vector<std::string>{"classifier.dense.bias", "classifier.dense.weight",
                                      "classifier.out_proj.bias", "classifier.out_proj.weight"}));
  EXPECT_TRUE(r.unexpected.empty());
  EXPECT_EQ(cls.bert->layers[1]->final_norm->weight.to_vector<float>(),
            source.bert->layers[1]->final_norm->weight.to_vector<float>());
}
