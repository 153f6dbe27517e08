#include "data/text_tokenizer.h"

#include <gtest/gtest.h>

#include <string>

#include "base/error.h"
#include "data/byte_level_bpe_trainer.h"
#include "data/hf_tokenizer_json.h"
#include "data/tokenizer_io.h"
#include "io/text_file.h"
#include "tests/data/test_util.h"

namespace heed::data {
namespace {

TextTokenizer golden_wordpiece() {
  return TextTokenizer(
      WordPieceTokenizer::from_file(std::string(HEED_DATA_TEST_DIR) + "/golden/vocab.txt"));
}

TEST(TextTokenizer, WordPieceAnswersAsBertDoes) {
  const TextTokenizer tok = golden_wordpiece();
  const WordPieceTokenizer& wp = tok.wordpiece("a test");
  EXPECT_EQ(tok.vocab_size(), wp.vocab_size());
  EXPECT_EQ(tok.start_id(), wp.cls_id());
  EXPECT_EQ(tok.end_id(), wp.sep_id());
  EXPECT_EQ(tok.pad_id(), wp.pad_id());
  const std::vector<int32_t> ids = tok.encode("hello world");
  EXPECT_EQ(ids, wp.encode_ids("hello world"));
  EXPECT_EQ(tok.encode_target("hello world"), ids);
  // As an encoder input the text sits between [CLS] and [SEP].
  const std::vector<int32_t> source = tok.encode_source("hello world");
  ASSERT_EQ(source.size(), ids.size() + 2);
  EXPECT_EQ(source.front(), wp.cls_id());
  EXPECT_EQ(source.back(), wp.sep_id());
  EXPECT_EQ(tok.decode(source), wp.decode(ids));
}

TEST(TextTokenizer, CharactersSplitSourcesAndTargetsTheirOwnWay) {
  const TextTokenizer tok(CharTokenizer::build_pair({"cat"}, CharTokenizer::Unit::kCharacter,
                                                    {"K AE T"},
                                                    CharTokenizer::Unit::kWhitespaceSymbol));
  const std::vector<int32_t> source = tok.encode("cat"), target = tok.encode_target("K AE T");
  EXPECT_EQ(source.size(), 3u);
  EXPECT_EQ(target.size(), 3u);
  EXPECT_EQ(tok.encode_source("cat"), source);
  EXPECT_EQ(tok.decode_source(source), "cat");
  EXPECT_EQ(tok.decode(target), "K AE T");
  try {
    tok.wordpiece("task mlm");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "task mlm needs a WordPiece tokenizer; this one is a character tokenizer");
  }
}

// Found by fuzz/json_files_fuzz.cpp: a tokenizer_config.json that is not an object, or whose
// keys have the wrong type, let nlohmann's type_error out of the loaders ("cannot use value()
// with array"), a message that names neither the file nor the key.
TEST(TextTokenizer, MalformedTokenizerConfigIsAnErrorNamingTheFileAndKey) {
  testing::ScratchDir dir;
  dir.write("vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nthe\n");
  const std::string model = dir.file("");
  const std::pair<std::string, std::string> cases[] = {
      {"[1]", "tokenizer_config.json: expected a JSON object of tokenizer settings, not array"},
      {R"({"tokenizer_class": 5})",
       "tokenizer_config.json: tokenizer_class is 5; it must be a string"},
      {R"({"do_lower_case": "yes"})",
       "tokenizer_config.json: do_lower_case is \"yes\"; it must be true or false"},
      {R"({"strip_accents": 0})",
       "tokenizer_config.json: strip_accents is 0; it must be true or false"},
      {R"({"tokenizer_class": "HeedCharTokenizer", "file": []})",
       "tokenizer_config.json: file is []; it must be a string"},
  };
  for (const auto& [json, message] : cases) {
    dir.write("tokenizer_config.json", json);
    try {
      TextTokenizer::load(model);
      ADD_FAILURE() << json << ": no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
  dir.write("tokenizer_config.json", "[1]");
  EXPECT_THROW(load_truncation(model), Error);
  // Found by fuzz/json_files_fuzz.cpp: a fraction below 1 passed as "positive" and became a
  // limit of 0 tokens.
  for (const char* bad : {R"({"model_max_length": 0.1})", R"({"model_max_length": 0})",
                          R"({"model_max_length": 512.5})"}) {
    dir.write("tokenizer_config.json", bad);
    EXPECT_THROW(load_truncation(model), Error) << bad;
  }
  dir.write("tokenizer_config.json", R"({"model_max_length": 512})");
  EXPECT_EQ(load_truncation(model).max_length, 512);
  dir.write("tokenizer_config.json", R"({"model_max_length": 1e30})");  // HF's "no limit"
  EXPECT_FALSE(load_truncation(model).max_length.has_value());
  // null and absent keys keep their defaults, as before.
  dir.write("tokenizer_config.json", R"({"tokenizer_class": null, "strip_accents": null})");
  EXPECT_EQ(TextTokenizer::load(model).encode("The"), TextTokenizer::load(model).encode("the"));
}

std::string data_file(const std::string& name) {
  return std::string(HEED_DATA_TEST_DIR) + "/" + name;
}

ByteLevelBpe gpt2_bpe(ByteLevelBpeOptions options = {}) {
  return ByteLevelBpe::load(data_file("gpt2/vocab.json"), data_file("gpt2/merges.txt"), options);
}

TEST(TextTokenizer, Gpt2BpeSpellsEveryByteAndEndsDocumentsInEndOfText) {
  const TextTokenizer tok(BpeTokenizer::gpt2(gpt2_bpe()));
  EXPECT_EQ(tok.type_name(), "bpe");
  EXPECT_EQ(tok.vocab_size(), 50257);
  // GPT-2's one special token plays every role; nothing is added around a text.
  EXPECT_EQ(tok.start_id(), 50256);
  EXPECT_EQ(tok.end_id(), 50256);
  EXPECT_EQ(tok.pad_id(), 50256);
  const std::string text = "Hello world, naïve café 🙂";
  EXPECT_EQ(tok.encode_source(text), tok.encode(text));
  EXPECT_EQ(tok.encode(" world"), std::vector<int32_t>{995});
  EXPECT_EQ(tok.token(995), "Ġworld");
  EXPECT_EQ(tok.decode(tok.encode(text)), text);
  // A corpus line keeps its line end, which GPT-2 spells as "Ċ" (198).
  std::vector<int32_t> line = tok.encode_corpus_line("Hello");
  ASSERT_FALSE(line.empty());
  EXPECT_EQ(line.back(), 198);
  // The special token is dropped from decoded text.
  std::vector<int32_t> with_end = tok.encode("Hi");
  with_end.push_back(50256);
  EXPECT_EQ(tok.decode(with_end), "Hi");
  EXPECT_TRUE(tok.is_special(50256));
  EXPECT_FALSE(tok.is_special(995));
  EXPECT_EQ(testing::error_of([&] { tok.wordpiece("task mlm"); }),
            "task mlm needs a WordPiece tokenizer; this one is a byte-level BPE tokenizer");
}

TEST(TextTokenizer, BpeDirectoriesRoundTripAndNameTheirRoles) {
  testing::ScratchDir dir;
  const std::string model = dir.file("");
  const TextTokenizer saved(BpeTokenizer::gpt2(gpt2_bpe()));
  saved.save(model, 1024, Truncation::kHead);
  const TextTokenizer loaded = TextTokenizer::load(model);
  EXPECT_EQ(loaded.type_name(), "bpe");
  EXPECT_EQ(loaded.fingerprint(), saved.fingerprint());
  EXPECT_EQ(loaded.encode("It's 2 o'clock\t\tnow."), saved.encode("It's 2 o'clock\t\tnow."));
  // vocab.json and merges.txt come out as the files they were read from.
  EXPECT_EQ(io::read_text_file(dir.file("merges.txt")),
            io::read_text_file(data_file("gpt2/merges.txt")));

  // RoBERTa's layout: <s> text </s>, its own pad and mask, a prefix space; roles as
  // transformers writes them (strings or AddedToken objects).
  const ByteLevelBpe gpt2 = gpt2_bpe();
  const std::vector<std::pair<std::string, std::string>> merges = gpt2.merge_list();
  std::vector<std::string> tokens;
  for (int32_t id = 0; id < gpt2.vocab_size(); ++id) tokens.push_back(gpt2.token(id));
  for (const char* special : {"<s>", "</s>", "<unk>", "<pad>", "<mask>"}) tokens.push_back(special);
  save_byte_level_bpe({.tokens = tokens, .merges = merges}, model);
  dir.write("tokenizer_config.json",
            R"({"tokenizer_class": "RobertaTokenizer", "add_prefix_space": true,
                "mask_token": {"content": "<mask>", "lstrip": true}})");
  const TextTokenizer roberta = TextTokenizer::load(model);
  const std::vector<int32_t> ids = roberta.encode_source("world");
  ASSERT_EQ(ids.size(), 3u);
  EXPECT_EQ(roberta.token(ids[0]), "<s>");
  EXPECT_EQ(roberta.token(ids[1]), "Ġworld");  // the prefix space
  EXPECT_EQ(roberta.token(ids[2]), "</s>");
  EXPECT_EQ(roberta.token(roberta.pad_id()), "<pad>");
  EXPECT_NE(roberta.fingerprint(), saved.fingerprint());

  dir.write("tokenizer_config.json", R"({"tokenizer_class": "RobertaTokenizer",
                                        "pad_token": "<nothing>"})");
  EXPECT_NE(testing::error_of([&] {
              TextTokenizer::load(model);
            }).find("the pad_token \"<nothing>\" is not in the vocabulary"),
            std::string::npos)
      << testing::error_of([&] { TextTokenizer::load(model); });
}

TEST(TextTokenizer, SentencePieceAddsItsEndAndSavesForT5Tokenizer) {
  const TextTokenizer tok(SentencePieceTokenizer::load(data_file("spm/unigram.model")));
  EXPECT_EQ(tok.type_name(), "sentencepiece");
  const std::string text = "the old captain sees the ship";
  const std::vector<int32_t> ids = tok.encode(text);
  std::vector<int32_t> source = ids;
  source.push_back(1);  // </s>, as T5's tokenizer adds it
  EXPECT_EQ(tok.encode_source(text), source);
  EXPECT_EQ(tok.end_id(), 1);
  EXPECT_EQ(tok.pad_id(), 0);
  EXPECT_EQ(tok.decode(source), text);
  // The fixture has no <s>.
  EXPECT_EQ(testing::error_of([&] { tok.start_id(); }),
            "this SentencePiece tokenizer has no bos token");
  testing::ScratchDir dir;
  tok.save(dir.file(""), 512, Truncation::kHead);
  const TextTokenizer loaded = TextTokenizer::load(dir.file(""));
  EXPECT_EQ(loaded.encode(text), ids);
  EXPECT_EQ(loaded.fingerprint(), tok.fingerprint());
}

// A directory that ships only Hugging Face's tokenizer.json (as many do) loads; what heed
// saves carries one too, which reads back to the same ids.
TEST(TextTokenizer, TokenizerJsonAloneLoadsAndSavedDirectoriesCarryOne) {
  const std::string text = "Hello world, it's 2 o'clock.";
  for (const char* fixture : {"gpt2.json", "roberta.json", "bert.json"}) {
    testing::ScratchDir dir;
    std::filesystem::copy_file(data_file(std::string("tokenizer_json/") + fixture),
                               dir.file("tokenizer.json"));
    const TextTokenizer tok = TextTokenizer::load(dir.file(""));
    EXPECT_EQ(tok.type_name(), std::string(fixture) == "bert.json" ? "wordpiece" : "bpe");
    const std::vector<int32_t> ids = tok.encode(text);
    EXPECT_FALSE(ids.empty());
    const std::vector<int32_t> source = tok.encode_source(text);
    const size_t added = std::string(fixture) == "gpt2.json" ? 0 : 2;  // [CLS]/<s> and [SEP]/</s>
    EXPECT_EQ(source.size(), ids.size() + added) << fixture;

    testing::ScratchDir saved;
    tok.save(saved.file(""), 512, Truncation::kHead);
    EXPECT_TRUE(std::filesystem::exists(saved.file("tokenizer.json"))) << fixture;
    const TokenizerJson json = read_tokenizer_json(saved.file("tokenizer.json"));
    EXPECT_EQ(json.encode(text, /*add_special_tokens=*/false).input_ids, ids) << fixture;
    EXPECT_EQ(json.encode(text).input_ids, source) << fixture;
    EXPECT_EQ(TextTokenizer::load(saved.file("")).encode_source(text), source) << fixture;
  }
}

TEST(TextTokenizer, ADirectoryWithoutAClassIsReadByItsFiles) {
  testing::ScratchDir dir;
  const std::string model = dir.file("");
  EXPECT_NE(testing::error_of([&] { TextTokenizer::load(model); }).find("no tokenizer (none of"),
            std::string::npos);
  gpt2_bpe().save(model);
  dir.write("tokenizer_config.json", R"({"model_max_length": 1024})");  // as GPT-2's own
  EXPECT_EQ(TextTokenizer::load(model).type_name(), "bpe");
}

}  // namespace
}  // namespace heed::data
