#include "data/text_tokenizer.h"

#include <gtest/gtest.h>

#include <string>

#include "autograd/error.h"
#include "data/tokenizer_io.h"
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

}  // namespace
}  // namespace heed::data
