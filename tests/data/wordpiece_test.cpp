#include "data/wordpiece.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "data/char_tokenizer.h"
#include "tests/data/test_util.h"

namespace heed::data {
namespace {

using testing::error_of;
using testing::golden_path;
using testing::ScratchDir;

WordPieceTokenizer golden_tokenizer(bool lowercase) {
  WordPieceOptions options;
  options.lowercase = lowercase;
  return WordPieceTokenizer::from_file(golden_path("vocab.txt"), options);
}

TEST(WordPiece, SpecialTokensAreLookedUpByName) {
  auto tok = golden_tokenizer(true);
  // The golden vocabulary deliberately puts them at unusual ids.
  EXPECT_EQ(tok.pad_id(), 0);
  EXPECT_EQ(tok.cls_id(), 3);
  EXPECT_EQ(tok.sep_id(), 4);
  EXPECT_EQ(tok.unk_id(), 5);
  EXPECT_EQ(tok.mask_id(), 6);
  EXPECT_EQ(tok.special_ids(), (std::vector<int32_t>{0, 3, 4, 5, 6}));
  EXPECT_FALSE(tok.is_special(1));  // [unused0] is an ordinary token
}

TEST(WordPiece, HandWorkedExample) {
  auto tok = golden_tokenizer(true);
  // "UNAFFABLE" lower-cases to "unaffable" = un ##aff ##able (ids 34 35 36, vocab lines).
  EXPECT_EQ(tok.encode_ids("UNAFFABLE!"), (std::vector<int32_t>{34, 35, 36, 20}));
  auto e = tok.encode("Naïve café");
  EXPECT_EQ(e.input_ids, (std::vector<int32_t>{3, 45, 43, 4}));
  EXPECT_EQ(e.token_type_ids, (std::vector<int32_t>{0, 0, 0, 0}));
  EXPECT_EQ(e.special_tokens_mask, (std::vector<int32_t>{1, 0, 0, 1}));
}

// Every case of golden.json, whose expectations come from make_golden.py: an independent
// implementation of the BERT algorithm over Python's unicodedata.
TEST(WordPiece, GoldenCases) {
  std::ifstream in(golden_path("golden.json"));
  ASSERT_TRUE(in.good());
  auto cases = nlohmann::json::parse(in);
  ASSERT_GE(cases.size(), 20u);
  auto uncased = golden_tokenizer(true), cased = golden_tokenizer(false);
  for (const auto& c : cases) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const auto& tok = c["lowercase"].get<bool>() ? uncased : cased;
    const std::string text = c["text"];
    const size_t max_length = c["max_length"];
    Encoding e;
    if (c["text_pair"].is_null()) {
      if (max_length == 0) {
        EXPECT_EQ(tok.tokenize(text), c["tokens"].get<std::vector<std::string>>());
      }
      e = tok.encode(text, max_length);
    } else {
      e = tok.encode_pair(text, c["text_pair"].get<std::string>(), max_length);
    }
    EXPECT_EQ(e.input_ids, c["input_ids"].get<std::vector<int32_t>>());
    EXPECT_EQ(e.token_type_ids, c["token_type_ids"].get<std::vector<int32_t>>());
    EXPECT_EQ(tok.decode(e.input_ids), c["decoded"].get<std::string>());
  }
}

TEST(WordPiece, DecodeKeepsSpecialTokensWhenAsked) {
  auto tok = golden_tokenizer(true);
  auto e = tok.encode_pair("Hello, world!", "The dog.");
  EXPECT_EQ(tok.decode(e.input_ids, false), "[CLS] hello, world! [SEP] the dog. [SEP]");
  EXPECT_EQ(tok.decode(e.input_ids, false, false), "[CLS] hello , world ! [SEP] the dog . [SEP]");
  // A continuation right after a special token is not glued onto it.
  std::vector<int32_t> ids{3, 13, 4};
  EXPECT_EQ(tok.decode(ids, false), "[CLS] ##s [SEP]");
}

TEST(WordPiece, TruncationNeedsRoomForSpecials) {
  auto tok = golden_tokenizer(true);
  EXPECT_THROW(tok.encode_pair("a", "b", 2), Error);
  EXPECT_EQ(tok.encode("a b c", 2).input_ids, (std::vector<int32_t>{3, 4}));
}

TEST(WordPiece, TruncationSidesKeepHeadTailOrBoth) {
  const std::vector<int32_t> ten{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  auto cut = [&](size_t keep, Truncation side) {
    std::vector<int32_t> ids = ten;
    truncate_ids(ids, keep, side);
    return ids;
  };
  EXPECT_EQ(cut(4, Truncation::kHead), (std::vector<int32_t>{1, 2, 3, 4}));
  EXPECT_EQ(cut(4, Truncation::kTail), (std::vector<int32_t>{7, 8, 9, 10}));
  // The head gets the odd id.
  EXPECT_EQ(cut(5, Truncation::kHeadTail), (std::vector<int32_t>{1, 2, 3, 9, 10}));
  EXPECT_EQ(cut(1, Truncation::kHeadTail), (std::vector<int32_t>{1}));
  EXPECT_EQ(cut(0, Truncation::kTail), (std::vector<int32_t>{}));
  for (Truncation side : {Truncation::kHead, Truncation::kTail, Truncation::kHeadTail}) {
    EXPECT_EQ(cut(10, side), ten);
    EXPECT_EQ(cut(12, side), ten);
  }
}

TEST(WordPiece, PairTruncationCountsLongestFirstAndCutsOnTheGivenSide) {
  auto tok = golden_tokenizer(true);
  const int32_t cls = tok.cls_id(), sep = tok.sep_id();
  const std::vector<int32_t> a{21, 22, 23, 24, 25, 26}, b{31, 32, 33};
  // Budget 8 - 3 = 5: longest first leaves a 3 ids and b 2 (b loses the tie).
  auto ids = [&](Truncation side) { return tok.build_inputs(a, b, 8, side).input_ids; };
  EXPECT_EQ(ids(Truncation::kHead), (std::vector<int32_t>{cls, 21, 22, 23, sep, 31, 32, sep}));
  EXPECT_EQ(ids(Truncation::kTail), (std::vector<int32_t>{cls, 24, 25, 26, sep, 32, 33, sep}));
  EXPECT_EQ(ids(Truncation::kHeadTail), (std::vector<int32_t>{cls, 21, 22, 26, sep, 31, 33, sep}));
  const Encoding e = tok.build_inputs(a, b, 8, Truncation::kHeadTail);
  EXPECT_EQ(e.token_type_ids, (std::vector<int32_t>{0, 0, 0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(e.special_tokens_mask, (std::vector<int32_t>{1, 0, 0, 0, 1, 0, 0, 1}));
  // A single text keeps its first and last pieces.
  const std::vector<int32_t> all = tok.encode("the quick fox lazy dog").input_ids;
  ASSERT_GT(all.size(), 6u);
  const std::vector<int32_t> kept =
      tok.encode("the quick fox lazy dog", 5, Truncation::kHeadTail).input_ids;
  EXPECT_EQ(kept, (std::vector<int32_t>{cls, all[1], all[2], all[all.size() - 2], sep}));
}

TEST(WordPiece, InvalidUtf8InTextIsAnError) {
  auto tok = golden_tokenizer(true);
  try {
    tok.encode_ids("hello \xC3\x28 world");
    FAIL() << "expected heed::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("invalid UTF-8 at byte 6"), std::string::npos) << e.what();
  }
  EXPECT_THROW(tok.encode_ids("\xED\xA0\x80"), Error);  // a UTF-16 surrogate
  EXPECT_THROW(tok.encode_ids("\xC0\xAF"), Error);      // over-long '/'
  EXPECT_THROW(tok.encode_ids("abc\xE4\xB8"), Error);   // truncated
}

TEST(Vocab, BadFilesGiveClearErrors) {
  ScratchDir dir;
  EXPECT_NE(
      error_of([&] { Vocab::load(dir.file("missing.txt")); }).find("missing.txt: cannot open"),
      std::string::npos);
  std::string empty = dir.write("empty.txt", "");
  EXPECT_NE(error_of([&] { Vocab::load(empty); }).find("empty.txt: vocabulary file is empty"),
            std::string::npos);
  std::string no_unk = dir.write("no_unk.txt", "[PAD]\n[CLS]\n[SEP]\nhello\n");
  EXPECT_NE(error_of([&] {
              WordPieceTokenizer::from_file(no_unk);
            }).find("no_unk.txt: vocabulary has no unknown token '[UNK]'"),
            std::string::npos);
  std::string bad_utf8 = dir.write("bad.txt", "[UNK]\nok\nbad\xFF\n");
  EXPECT_NE(error_of([&] { Vocab::load(bad_utf8); }).find("bad.txt:3: invalid UTF-8"),
            std::string::npos);
  // A vocabulary without [CLS] still tokenizes, but building model inputs names what's missing.
  std::string no_cls = dir.write("no_cls.txt", "[UNK]\nhello\n");
  auto tok = WordPieceTokenizer::from_file(no_cls);
  EXPECT_EQ(tok.encode_ids("hello"), (std::vector<int32_t>{1}));
  EXPECT_NE(error_of([&] {
              tok.encode("hello");
            }).find("no_cls.txt: vocabulary has no special token '[CLS]'"),
            std::string::npos);
}

TEST(Vocab, CrlfIsStrippedAsTransformersDoes) {
  ScratchDir dir;
  std::string path = dir.write("v.txt", "[UNK]\r\nhello\r\nworld \nhello \n");
  auto v = Vocab::load(path);
  EXPECT_EQ(v.size(), 4);
  EXPECT_EQ(v.token(2), "world ");  // only the line end is stripped
  EXPECT_EQ(*v.find("hello"), 1);
  EXPECT_EQ(*v.find("hello "), 3);
  EXPECT_THROW(v.token(4), Error);
}

// Found by fuzz/vocab_fuzz.cpp: a "\r\r\n" line end loaded as a token ending in "\r", which
// save wrote as "token\r\n" and load read back without it, so a checkpoint's vocab.txt
// differed from the vocabulary the model was trained with. Load refuses such a line, and
// save such a token.
TEST(Vocab, ATokenEndingInACarriageReturnIsRefused) {
  ScratchDir dir;
  const std::string path = dir.write("v.txt", "[UNK]\n[SEP]\r\r\n");
  EXPECT_EQ(error_of([&] { Vocab::load(path); }),
            path + ":2: the token ends in a carriage return (a \"\\r\\r\\n\" line end?)");
  const Vocab built(std::vector<std::string>{"[UNK]", "a\r", "b\rc"});
  EXPECT_EQ(error_of([&] { built.save(dir.file("out.txt")); }),
            dir.file("out.txt") +
                ": token 1 ends in a carriage return and cannot be saved (it would load back "
                "without it)");
  const Vocab inner(std::vector<std::string>{"[UNK]", "b\rc"});  // inside a token: round trips
  inner.save(dir.file("inner.txt"));
  EXPECT_EQ(Vocab::load(dir.file("inner.txt")).tokens(), inner.tokens());
}

// A token listed twice would have two ids, one of them never produced: a corrupt or
// hand-edited file, refused with the line of each.
TEST(Vocab, DuplicateTokensAreRefusedNamingTheFileAndLines) {
  ScratchDir dir;
  const std::string path = dir.write("v.txt", "[UNK]\r\nhello\r\nworld\nhello\n");
  EXPECT_EQ(error_of([&] { Vocab::load(path); }),
            path + ":4: the token 'hello' is listed twice (first at line 2)");
  EXPECT_EQ(error_of([&] {
              Vocab(std::vector<std::string>{"[UNK]", "a", "b", "a"});
            }),
            "vocabulary lists the token 'a' twice (ids 1 and 3)");
  // A character tokenizer's file too.
  const std::string chars = dir.write(
      "chars.json",
      R"({"unit": "character", "tokens": ["[PAD]", "[UNK]", "[BOS]", "[EOS]", "a", "a"]})");
  EXPECT_EQ(error_of([&] { CharTokenizer::load(chars); }),
            chars + ": key 'tokens': vocabulary lists the token 'a' twice (ids 4 and 5)");
}

TEST(Vocab, ADirectoryIsNotAVocabularyFile) {
  ScratchDir dir;
  EXPECT_EQ(error_of([&] { Vocab::load(dir.file("")); }),
            dir.file("") + ": is a directory, not a vocabulary file (one token per line)");
}

// A vocabulary whose write fails (a full disk) leaves the file as it was, or no file: never a
// truncated one that every later run would load.
TEST(Vocab, AFailedSaveLeavesTheOldFileOrNone) {
  ScratchDir dir;
  const Vocab old_vocab(std::vector<std::string>{"[PAD]", "[UNK]", "old"});
  old_vocab.save(dir.file("vocab.txt"));
  std::vector<std::string> tokens = {"[PAD]", "[UNK]"};
  for (int i = 0; i < 2000; ++i) tokens.push_back("token" + std::to_string(i));
  const Vocab big(tokens);
  {
    testing::FileSizeLimit limit(1000);
    EXPECT_NE(error_of([&] { big.save(dir.file("vocab.txt")); }).find("write failed"),
              std::string::npos);
    EXPECT_NE(error_of([&] { big.save(dir.file("new_vocab.txt")); }).find("write failed"),
              std::string::npos);
  }
  EXPECT_EQ(Vocab::load(dir.file("vocab.txt")).tokens(), old_vocab.tokens());
  EXPECT_EQ(testing::entries_of(dir.file("")), std::vector<std::string>{"vocab.txt"});
  big.save(dir.file("vocab.txt"));  // with room, it is written
  EXPECT_EQ(Vocab::load(dir.file("vocab.txt")).tokens(), tokens);
}

TEST(Vocab, SaveLoadRoundTrip) {
  ScratchDir dir;
  Vocab v(std::vector<std::string>{"[PAD]", "[UNK]", "中", "##ing"});
  v.save(dir.file("out.txt"));
  auto w = Vocab::load(dir.file("out.txt"));
  EXPECT_EQ(w.tokens(), v.tokens());
  EXPECT_EQ(w.fingerprint(), v.fingerprint());
}

}  // namespace
}  // namespace heed::data
