// A RoBERTa tokenizer's directory as heed writes it into a checkpoint: the files and keys
// transformers' RobertaTokenizer and RobertaTokenizerFast read (vocab.json, merges.txt,
// tokenizer_config.json, special_tokens_map.json, tokenizer.json), with <s> <pad> </s> <unk>
// <mask> at RoBERTa's ids, and heed reads it back as the same tokenizer, cut as it was trained.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "data/bpe_tokenizer.h"
#include "data/byte_level_bpe_trainer.h"
#include "data/text_tokenizer.h"
#include "data/tokenizer_io.h"
#include "io/json_file.h"
#include "io/text_file.h"
#include "tests/data/test_util.h"

namespace heed::data {
namespace {

using nlohmann::json;

// A BPE trained as `train` trains RoBERTa's: its special tokens first, at ids 0..4.
BpeTokenizer trained_roberta(const testing::ScratchDir& dir) {
  std::vector<std::string> lines;
  for (int i = 0; i < 3; ++i) lines.push_back("the old captain sat on the deck of the ship\n");
  const TrainedByteLevelBpe trained = train_byte_level_bpe_on_texts(
      lines, {.vocab_size = 300,
              .min_frequency = 1,
              .special_tokens = {"<s>", "<pad>", "</s>", "<unk>", "<mask>"}});
  save_byte_level_bpe(trained, dir.file("trained"));
  dir.write("trained/tokenizer_config.json", R"({"tokenizer_class": "RobertaTokenizer"})");
  return BpeTokenizer::load(dir.file("trained"));
}

TEST(RobertaTokenizerFiles, AreTheFilesAndKeysTransformersReads) {
  testing::ScratchDir dir;
  const TextTokenizer tok(trained_roberta(dir));
  const std::string model = dir.file("model");
  tok.save(model, 126, Truncation::kHeadTail);

  const json vocab = io::read_json_file(dir.file("model/vocab.json"));
  EXPECT_EQ(vocab["<s>"], 0);
  EXPECT_EQ(vocab["<pad>"], 1);
  EXPECT_EQ(vocab["</s>"], 2);
  EXPECT_EQ(vocab["<unk>"], 3);
  EXPECT_EQ(vocab["<mask>"], 4);
  EXPECT_EQ(io::read_text_file(dir.file("model/merges.txt")).rfind("#version: 0.2\n", 0), 0u);

  const json config = io::read_json_file(dir.file("model/tokenizer_config.json"));
  EXPECT_EQ(config["tokenizer_class"], "RobertaTokenizer");
  EXPECT_EQ(config["add_prefix_space"], false);  // RobertaTokenizer's default
  EXPECT_EQ(config["errors"], "replace");
  EXPECT_EQ(config["model_max_length"], 126);
  EXPECT_EQ(config["truncation_side"], "right");  // transformers cuts one end only
  EXPECT_EQ(config["heed_truncation"], "head_tail");
  const json roles = {{"bos_token", "<s>"},    {"eos_token", "</s>"},  {"unk_token", "<unk>"},
                      {"sep_token", "</s>"},   {"pad_token", "<pad>"}, {"cls_token", "<s>"},
                      {"mask_token", "<mask>"}};
  for (const auto& [key, token] : roles.items()) EXPECT_EQ(config[key], token) << key;
  EXPECT_EQ(io::read_json_file(dir.file("model/special_tokens_map.json")), roles);

  // The fast tokenizer's file: RoBERTa's post-processor, and <mask> taking the space before it.
  const json fast = io::read_json_file(dir.file("model/tokenizer.json"));
  EXPECT_EQ(fast["post_processor"]["type"], "RobertaProcessing");
  EXPECT_EQ(fast["post_processor"]["cls"], json({"<s>", 0}));
  EXPECT_EQ(fast["post_processor"]["sep"], json({"</s>", 2}));
  EXPECT_EQ(fast["pre_tokenizer"]["type"], "ByteLevel");
  EXPECT_EQ(fast["pre_tokenizer"]["add_prefix_space"], false);
  ASSERT_EQ(fast["added_tokens"].size(), 5u);
  for (const json& added : fast["added_tokens"]) {
    EXPECT_TRUE(added["special"].get<bool>()) << added;
    EXPECT_EQ(added["lstrip"], added["content"] == "<mask>") << added;
  }

  // heed reads it back as the same tokenizer, and knows how the checkpoint's inputs were cut.
  const TextTokenizer loaded = TextTokenizer::load(model);
  EXPECT_EQ(loaded.fingerprint(), tok.fingerprint());
  EXPECT_EQ(loaded.mask_id(), 4);
  EXPECT_EQ(loaded.encode_source("the old ship"), tok.encode_source("the old ship"));
  const TruncationSettings cut = load_truncation(model);
  EXPECT_EQ(cut.max_length, 126);
  EXPECT_EQ(cut.side, Truncation::kHeadTail);
}

}  // namespace
}  // namespace heed::data
