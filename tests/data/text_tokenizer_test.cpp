#include "data/text_tokenizer.h"

#include <gtest/gtest.h>

#include <string>

#include "autograd/error.h"

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

}  // namespace
}  // namespace heed::data
