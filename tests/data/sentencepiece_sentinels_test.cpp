// T5's sentinels on a SentencePiece model: numbered backwards after the model's pieces as
// transformers' T5Tokenizer numbers them, found in text, spelled in decoding, and carried by a
// model directory's tokenizer_config.json (extra_ids).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "data/sentencepiece_tokenizer.h"
#include "data/text_tokenizer.h"
#include "data/tokenizer_io.h"
#include "io/json_file.h"
#include "tests/data/test_util.h"

namespace heed::data {
namespace {

using testing::error_of;
using testing::ScratchDir;

SentencePieceTokenizer base() {
  return SentencePieceTokenizer::load(std::string(HEED_DATA_TEST_DIR) + "/spm/unigram.model");
}

std::vector<int32_t> join(std::initializer_list<std::vector<int32_t>> parts) {
  std::vector<int32_t> all;
  for (const auto& p : parts) all.insert(all.end(), p.begin(), p.end());
  return all;
}

TEST(SentencePieceSentinels, AreTheLastIdsNumberedBackwards) {
  const SentencePieceTokenizer plain = base();
  const int32_t n = plain.vocab_size();
  const SentencePieceTokenizer tok = plain.with_extra_ids(3);
  EXPECT_EQ(tok.piece_count(), n);
  EXPECT_EQ(tok.vocab_size(), n + 3);
  EXPECT_EQ(tok.extra_ids(), 3);
  EXPECT_EQ(tok.sentinel_id(0), n + 2);  // <extra_id_0> = vocab_size - 1, as T5Tokenizer
  EXPECT_EQ(tok.sentinel_id(2), n);
  EXPECT_EQ(tok.token(n + 2), "<extra_id_0>");
  EXPECT_EQ(tok.token(n), "<extra_id_2>");
  EXPECT_EQ(tok.id("<extra_id_1>"), n + 1);
  EXPECT_EQ(tok.id("<extra_id_3>"), std::nullopt);   // past the last
  EXPECT_EQ(tok.id("<extra_id_01>"), std::nullopt);  // not a sentinel's spelling
  EXPECT_EQ(tok.id("<extra_id_1> "), std::nullopt);
  EXPECT_TRUE(tok.is_special(n));
  EXPECT_EQ(tok.is_special(n - 1), plain.is_special(n - 1));
  EXPECT_NE(error_of([&] { tok.sentinel_id(3); }).find("no sentinel <extra_id_3>"),
            std::string::npos);
  EXPECT_NE(error_of([&] { tok.token(n + 3); }).find("outside"), std::string::npos);
  EXPECT_NE(error_of([&] { plain.with_extra_ids(-1); }).find("extra_ids"), std::string::npos);
  // The plain model is unchanged, and so is its fingerprint (its token caches stay valid).
  EXPECT_EQ(plain.vocab_size(), n);
  EXPECT_EQ(plain.with_extra_ids(0).fingerprint(), plain.fingerprint());
  EXPECT_NE(tok.fingerprint(), plain.fingerprint());
}

TEST(SentencePieceSentinels, AreFoundInTextWithoutTheSpaceAroundThemAndSpelledInDecoding) {
  const SentencePieceTokenizer plain = base();
  const SentencePieceTokenizer tok = plain.with_extra_ids(10);
  const int32_t s0 = tok.sentinel_id(0), s9 = tok.sentinel_id(9);
  EXPECT_EQ(tok.encode("the old <extra_id_0> sees the ship"),
            join({plain.encode("the old"), {s0}, plain.encode("sees the ship")}));
  EXPECT_EQ(tok.encode("<extra_id_9>the ship<extra_id_0>"),
            join({{s9}, plain.encode("the ship"), {s0}}));
  // Not sentinels of this tokenizer: plain text to the model.
  for (const char* text : {"the <extra_id_10> ship", "the <extra_id_ ship", "a <extra_id_1"})
    EXPECT_EQ(tok.encode(text), plain.encode(text)) << text;
  EXPECT_EQ(tok.decode(tok.encode("the old <extra_id_0> sees the ship")),
            "the old <extra_id_0> sees the ship");
  // A model input drops them as it drops every special piece.
  const TextTokenizer text_tok(tok);
  EXPECT_EQ(text_tok.decode(tok.encode("the old <extra_id_0> sees the ship")),
            plain.decode(join({plain.encode("the old"), plain.encode("sees the ship")})));
  EXPECT_EQ(text_tok.sentinel_ids().size(), 10u);
  EXPECT_EQ(text_tok.sentinel_ids().front(), s0);
  EXPECT_EQ(text_tok.vocab_size(), plain.vocab_size() + 10);
  EXPECT_TRUE(TextTokenizer(plain).sentinel_ids().empty());
}

TEST(SentencePieceSentinels, ModelDirectoriesCarryThemAsT5TokenizerReadsThem) {
  const SentencePieceTokenizer tok = base().with_extra_ids(5);
  ScratchDir dir;
  TextTokenizer(tok).save(dir.file(""), 512, Truncation::kHead);
  const nlohmann::json config = io::read_json_file(dir.file("tokenizer_config.json"));
  EXPECT_EQ(config["tokenizer_class"], "T5Tokenizer");
  EXPECT_EQ(config["extra_ids"], 5);
  EXPECT_EQ(config["additional_special_tokens"],
            nlohmann::json(
                {"<extra_id_0>", "<extra_id_1>", "<extra_id_2>", "<extra_id_3>", "<extra_id_4>"}));
  const nlohmann::json map = io::read_json_file(dir.file("special_tokens_map.json"));
  EXPECT_EQ(map["additional_special_tokens"], config["additional_special_tokens"]);
  EXPECT_EQ(map["eos_token"], tok.token(tok.eos_id()));
  const TextTokenizer loaded = TextTokenizer::load(dir.file(""));
  EXPECT_EQ(loaded.vocab_size(), tok.vocab_size());
  EXPECT_EQ(loaded.fingerprint(), TextTokenizer(tok).fingerprint());
  EXPECT_EQ(loaded.encode("a <extra_id_4> b"), tok.encode("a <extra_id_4> b"));

  // A directory that does not say (as Hugging Face's t5-small) has T5Tokenizer's 100.
  dir.write("tokenizer_config.json", R"({"model_max_length": 512})");
  EXPECT_EQ(TextTokenizer::load(dir.file("")).vocab_size(), tok.piece_count() + 100);
  dir.write("tokenizer_config.json", R"({"tokenizer_class": "T5Tokenizer", "extra_ids": -2})");
  const std::string message = error_of([&] { TextTokenizer::load(dir.file("")); });
  EXPECT_NE(message.find("tokenizer_config.json: extra_ids is -2"), std::string::npos) << message;
}

}  // namespace
}  // namespace heed::data
