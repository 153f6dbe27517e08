// RoBERTa end to end on the tiny configs: masked-LM pretraining with its byte-level BPE, then a
// sequence classifier and a tagger fine-tuned from that checkpoint (init_from), each served by
// `infer` from the directory its run wrote.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "train/run_train.h"

namespace fs = std::filesystem;

using namespace heed::testing;

namespace {

std::vector<nlohmann::json> json_lines(const std::string& text) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

std::string roberta_mlm_args(const std::string& out) {
  return "--config configs/tiny/roberta_mlm.yaml --set train.output_dir=" + out +
         " --set tokenizer.vocab=" + out + "/bpe";
}

// Pretrains the tiny RoBERTa MLM into a fresh `name`_pretrain directory, then runs the tiny
// fine-tuning `config` from its final checkpoint into `out`.
Outcome fine_tune_from_tiny_roberta(const std::string& name, const std::string& config,
                                    const std::string& out) {
  const std::string mlm = fresh_dir(name + "_pretrain");
  Outcome pretrain = run_train(roberta_mlm_args(mlm));
  if (pretrain.exit_code != 0) return pretrain;
  return run_train("--config " + config + " --set train.output_dir=" + out +
                   " --set init_from=" + mlm + "/checkpoint-200");
}

}  // namespace

// A byte-level BPE trained with RoBERTa's special tokens, masked-LM without next-sentence
// prediction, a checkpoint in Hugging Face's RoBERTa names that `infer fill-mask` reads with the
// tokenizer's own <mask>.
TEST(EndToEnd, TinyRobertaLearnsAndItsCheckpointFillsMasks) {
  const std::string out = fresh_dir("roberta");
  Outcome o = run_train(roberta_mlm_args(out));
  ASSERT_EQ(o.exit_code, 0) << o.output;
  auto l = losses(out);
  ASSERT_GE(l.size(), 10u);
  EXPECT_LT(l.back().second, l.front().second - 1.0) << o.output;
  const std::string checkpoint = out + "/checkpoint-200";
  auto config = nlohmann::json::parse(file_bytes(checkpoint + "/config.json"));
  EXPECT_EQ(config["model_type"], "roberta");
  EXPECT_EQ(config["architectures"][0], "RobertaForMaskedLM");
  EXPECT_EQ(config["pad_token_id"], 1);
  EXPECT_EQ(config["type_vocab_size"], 1);
  auto tokenizer = nlohmann::json::parse(file_bytes(checkpoint + "/tokenizer_config.json"));
  EXPECT_EQ(tokenizer["tokenizer_class"], "RobertaTokenizer");
  auto vocab = nlohmann::json::parse(file_bytes(checkpoint + "/vocab.json"));
  EXPECT_EQ(vocab["<s>"], 0);
  EXPECT_EQ(vocab["<pad>"], 1);
  EXPECT_EQ(vocab["</s>"], 2);
  EXPECT_EQ(vocab["<mask>"], 4);
  const Outcome filled = run_infer("fill-mask --json --top-k 3 --checkpoint " + checkpoint +
                                   " --text 'the old <mask> sat'");
  ASSERT_EQ(filled.exit_code, 0) << filled.output;
  auto j = nlohmann::json::parse(filled.output);
  const auto ids = j["input_ids"].get<std::vector<int>>();
  ASSERT_GE(ids.size(), 5u) << filled.output;
  EXPECT_EQ(ids.front(), 0);
  EXPECT_EQ(ids.back(), 2);
  ASSERT_EQ(j["masks"].size(), 1u) << filled.output;
  EXPECT_EQ(ids[j["masks"][0]["position"].get<size_t>()], 4);
  EXPECT_EQ(j["masks"][0]["candidates"].size(), 3u);
}

// A RoBERTa run names the tokenizer it needs in one line.
TEST(EndToEnd, RobertaWithAWordPieceTokenizerIsAConfigError) {
  const std::string out = fresh_dir("roberta_wordpiece");
  Outcome o =
      run_train("--config configs/tiny/roberta_mlm.yaml --set train.output_dir=" + out +
                " --set tokenizer.type=wordpiece --set tokenizer.vocab=" + out + "/vocab.txt");
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_NE(o.output.find("tokenizer.type: task 'mlm' with model.arch roberta needs a bpe "
                          "tokenizer"),
            std::string::npos)
      << o.output;
}

// The spam classifier from the RoBERTa MLM: the whole encoder comes from the checkpoint (only the
// head is new), the run's checkpoint records how it cut texts, and `infer classify` on it gives
// every test text the label the run's own test evaluation gave it.
TEST(EndToEnd, RobertaClassifierFineTunesFromTheMlmCheckpointAndInferClassifies) {
  const std::string cls = fresh_dir("roberta_classify");
  Outcome o =
      fine_tune_from_tiny_roberta("roberta_classify", "configs/tiny/roberta_classify.yaml", cls);
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("; new: [classifier.dense.bias, classifier.dense.weight, "
                          "classifier.out_proj.bias, classifier.out_proj.weight]; "),
            std::string::npos)
      << o.output;
  auto final_metrics = nlohmann::json::parse(file_bytes(cls + "/final_metrics.json"));
  // The toy spam set is separable by its vocabulary: far above the 65% majority class.
  const double test_accuracy = final_metrics["test"]["accuracy"].get<double>();
  EXPECT_GT(test_accuracy, 0.85) << o.output;
  const std::string checkpoint = cls + "/checkpoint-160";
  auto config = nlohmann::json::parse(file_bytes(checkpoint + "/config.json"));
  EXPECT_EQ(config["model_type"], "roberta");
  EXPECT_EQ(config["architectures"][0], "RobertaForSequenceClassification");
  EXPECT_EQ(config["id2label"]["1"], "spam");
  auto tokenizer = nlohmann::json::parse(file_bytes(checkpoint + "/tokenizer_config.json"));
  EXPECT_EQ(tokenizer["tokenizer_class"], "RobertaTokenizer");
  EXPECT_EQ(tokenizer["model_max_length"], 32);
  EXPECT_EQ(tokenizer["heed_truncation"], "head_tail");
  EXPECT_EQ(tokenizer["truncation_side"], "right");

  std::ifstream test(std::string(HEED_SOURCE_DIR) + "/tests/tiny_data/spam_test.tsv");
  std::vector<std::string> labels;
  std::string texts, line;
  while (std::getline(test, line)) {
    const size_t tab = line.find('\t');
    labels.push_back(line.substr(0, tab));
    texts += line.substr(tab + 1) + "\n";
  }
  const Outcome classified =
      run_infer("classify --json --checkpoint " + checkpoint + " --text -", texts);
  ASSERT_EQ(classified.exit_code, 0) << classified.output;
  const std::vector<nlohmann::json> answers = json_lines(classified.output);
  ASSERT_EQ(answers.size(), labels.size());
  size_t correct = 0;
  for (size_t i = 0; i < answers.size(); ++i) {
    const auto ids = answers[i]["input_ids"].get<std::vector<int>>();
    EXPECT_EQ(ids.front(), 0);  // <s>
    EXPECT_EQ(ids.back(), 2);   // </s>
    EXPECT_LE(ids.size(), 32u);
    ASSERT_EQ(answers[i]["labels"].size(), 2u);
    correct += answers[i]["label"] == labels[i];
  }
  EXPECT_DOUBLE_EQ(static_cast<double>(correct) / labels.size(), test_accuracy);
}

// A RoBERTa tagger: each word read with a space before it and tagged by its first piece, in
// training as in `infer classify`.
TEST(EndToEnd, RobertaTaggerFineTunesFromTheMlmCheckpoint) {
  const std::string pos = fresh_dir("roberta_pos");
  Outcome o = fine_tune_from_tiny_roberta("roberta_pos", "configs/tiny/roberta_pos.yaml", pos);
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("; new: [classifier.bias, classifier.weight]; "), std::string::npos)
      << o.output;
  auto final_metrics = nlohmann::json::parse(file_bytes(pos + "/final_metrics.json"));
  // Tags of the toy grammar follow from the words: far above the most frequent tag (AT, ~30%).
  EXPECT_GT(final_metrics["test"]["accuracy"].get<double>(), 0.93) << o.output;
  const std::string checkpoint = pos + "/checkpoint-200";
  auto config = nlohmann::json::parse(file_bytes(checkpoint + "/config.json"));
  EXPECT_EQ(config["architectures"][0], "RobertaForTokenClassification");
  EXPECT_EQ(config["id2label"].size(), 8u);  // . AT IN JJ NN NNS VB VBZ

  const Outcome tagged = run_infer("classify --json --checkpoint " + checkpoint +
                                   " --text 'the cold dog sees the captains on the sea .'");
  ASSERT_EQ(tagged.exit_code, 0) << tagged.output;
  const nlohmann::json j = nlohmann::json::parse(tagged.output);
  const std::vector<std::string> want = {"AT",  "JJ", "NN", "VBZ", "AT",
                                         "NNS", "IN", "AT", "NN",  "."};
  ASSERT_EQ(j["words"].size(), want.size()) << tagged.output;
  size_t right = 0;
  for (size_t w = 0; w < want.size(); ++w) right += j["words"][w]["label"] == want[w];
  EXPECT_GE(right, want.size() - 1) << tagged.output;
  EXPECT_EQ(j["words"][0]["label"], "AT") << tagged.output;  // "the" is always AT
}
