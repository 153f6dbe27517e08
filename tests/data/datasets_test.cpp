#include "data/datasets.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "base/error.h"
#include "data/char_tokenizer.h"
#include "data/wordpiece.h"
#include "tests/data/test_util.h"

namespace heed::data {
namespace {

using testing::error_of;
using testing::golden_path;
using testing::ScratchDir;

TEST(TextClassification, LabelsFromTheFileAndPairs) {
  ScratchDir dir;
  auto tok = WordPieceTokenizer::from_file(golden_path("vocab.txt"));
  std::string train =
      dir.write("train.tsv", "spam\tthe quick fox\nham\tlazy dog\n\nham\tthe\tdog\n");
  TextClassificationDataset ds(train, tok, 16);
  EXPECT_EQ(ds.labels(), (LabelNames{"ham", "spam"}));
  ASSERT_EQ(ds.size(), 3u);
  EXPECT_EQ(ds.get(0).label, 1);
  EXPECT_EQ(ds.get(0).input_ids, (std::vector<int32_t>{3, 7, 9, 11, 4}));
  EXPECT_EQ(ds.get(2).input_ids, (std::vector<int32_t>{3, 7, 4, 17, 4}));
  EXPECT_EQ(ds.get(2).token_type_ids, (std::vector<int32_t>{0, 0, 0, 1, 1}));
  // Validation files use the training labels; an unknown one names file and line.
  std::string valid = dir.write("valid.tsv", "ham\tdog\neggs\tfox\n");
  EXPECT_NE(error_of([&] {
              TextClassificationDataset(valid, tok, 16, ds.labels());
            }).find("valid.tsv:2: unknown label 'eggs'"),
            std::string::npos);
}

TEST(TextClassification, LabelNamesAreTheDatasetsOwnWithoutTokenizing) {
  ScratchDir dir;
  auto tok = WordPieceTokenizer::from_file(golden_path("vocab.txt"));
  std::string train =
      dir.write("train.tsv", "spam\tthe quick fox\nham\tlazy dog\n\nurgent\tthe\tdog\nham\tfox\n");
  EXPECT_EQ(classification_label_names(train), (LabelNames{"ham", "spam", "urgent"}));
  EXPECT_EQ(classification_label_names(train), TextClassificationDataset(train, tok, 16).labels());
  // A line the dataset would reject is rejected with the same words.
  std::string no_tab = dir.write("a.tsv", "ham\tfine\njust text\n");
  EXPECT_NE(error_of([&] {
              classification_label_names(no_tab);
            }).find("a.tsv:2: expected label<TAB>text"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              classification_label_names(dir.write("e.tsv", "\n\n"));
            }).find("e.tsv: no examples"),
            std::string::npos);
}

TEST(TextClassification, LongTextsAreCutOnTheConfiguredSide) {
  ScratchDir dir;
  auto tok = WordPieceTokenizer::from_file(golden_path("vocab.txt"));
  const std::string text = "the quick fox the lazy dog";
  std::string train = dir.write("train.tsv", "spam\t" + text + "\n");
  for (Truncation side : {Truncation::kHead, Truncation::kTail, Truncation::kHeadTail}) {
    TextClassificationDataset ds(train, tok, 5, {}, side);
    EXPECT_EQ(ds.get(0).input_ids, tok.encode(text, 5, side).input_ids);
  }
  TextClassificationDataset tail(train, tok, 5, {}, Truncation::kTail);
  TextClassificationDataset head(train, tok, 5, {}, Truncation::kHead);
  EXPECT_NE(tail.get(0).input_ids, head.get(0).input_ids);
}

TEST(TextClassification, MalformedLinesNameFileAndLine) {
  ScratchDir dir;
  auto tok = WordPieceTokenizer::from_file(golden_path("vocab.txt"));
  std::string no_tab = dir.write("a.tsv", "ham\tfine\njust text\n");
  EXPECT_NE(error_of([&] {
              TextClassificationDataset(no_tab, tok, 16);
            }).find("a.tsv:2: expected label<TAB>text"),
            std::string::npos);
  std::string bad = dir.write("b.tsv", "ham\tok\nspam\tbad \xFF byte\n");
  EXPECT_NE(
      error_of([&] { TextClassificationDataset(bad, tok, 16); }).find("b.tsv:2: invalid UTF-8"),
      std::string::npos);
  std::string empty_label = dir.write("c.tsv", "\ttext\n");
  EXPECT_NE(error_of([&] {
              TextClassificationDataset(empty_label, tok, 16);
            }).find("c.tsv:1: empty label"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              TextClassificationDataset(dir.file("none.tsv"), tok, 16);
            }).find("none.tsv: cannot open"),
            std::string::npos);
}

TEST(FirstExamples, KeepsTheHeadOfTheFileInItsOrder) {
  ScratchDir dir;
  auto tok = WordPieceTokenizer::from_file(golden_path("vocab.txt"));
  auto all = std::make_shared<TextClassificationDataset>(
      dir.write("train.tsv", "spam\tthe quick fox\nham\tlazy dog\nham\tthe dog\n"), tok, 16);
  FirstExamples two(all, 2);
  ASSERT_EQ(two.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(two.get(i).input_ids, all->get(i).input_ids);
    EXPECT_EQ(two.get(i).label, all->get(i).label);
  }
  EXPECT_EQ(FirstExamples(all, 10).size(), 3u);  // more than there are: all of them
}

TEST(TokenClassification, TagNamesAreTheSortedUnionOfEverySplit) {
  ScratchDir dir;
  std::string train = dir.write("train.conll", "The\tAT\ndog\tNN\n\nA\tAT\ncat\tNN\n");
  std::string test = dir.write("test.conll", "Dogs\tNNS\nrun\tVB\n\n");
  EXPECT_EQ(conll_tag_names({train, test}), (LabelNames{"AT", "NN", "NNS", "VB"}));
  // A test tag that training never shows loads with that tag set instead of failing.
  auto tok = WordPieceTokenizer::from_file(golden_path("vocab.txt"));
  TokenClassificationDataset ds(test, tok, 16, conll_tag_names({train, test}));
  std::vector<int32_t> word_labels;
  for (int32_t l : ds.get(0).token_labels)
    if (l != -100) word_labels.push_back(l);
  EXPECT_EQ(word_labels, (std::vector<int32_t>{2, 3}));  // NNS, VB
  std::string bad = dir.write("bad.conll", "word-without-tag\n");
  EXPECT_NE(error_of([&] { conll_tag_names({bad}); }).find("bad.conll:1: expected word<TAB>tag"),
            std::string::npos);
}

TEST(TokenClassification, TagOnFirstPieceOnly) {
  ScratchDir dir;
  auto tok = WordPieceTokenizer::from_file(golden_path("vocab.txt"));
  // "jumps" = jump ##s; "unaffable" = un ##aff ##able.
  std::string path = dir.write("pos.conll", "The\tAT\nfox\tNN\njumps\tVBZ\n\nunaffable\tJJ\n");
  TokenClassificationDataset ds(path, tok, 16);
  EXPECT_EQ(ds.labels(), (LabelNames{"AT", "JJ", "NN", "VBZ"}));
  ASSERT_EQ(ds.size(), 2u);
  EXPECT_EQ(ds.get(0).input_ids, (std::vector<int32_t>{3, 7, 11, 12, 13, 4}));
  EXPECT_EQ(ds.get(0).token_labels, (std::vector<int32_t>{-100, 0, 2, 3, -100, -100}));
  EXPECT_EQ(ds.get(1).token_labels, (std::vector<int32_t>{-100, 1, -100, -100, -100}));
  TokenClassificationDataset cut(path, tok, 4);
  EXPECT_EQ(cut.get(0).input_ids, (std::vector<int32_t>{3, 7, 11, 4}));
  std::string bad = dir.write("bad.conll", "The\tAT\nfox\n");
  EXPECT_NE(error_of([&] {
              TokenClassificationDataset(bad, tok, 16);
            }).find("bad.conll:2: expected word<TAB>tag"),
            std::string::npos);
}

TEST(Seq2Seq, GraphemeToPhonemePairs) {
  ScratchDir dir;
  std::string path = dir.write("g2p.tsv", "HELLO\tHH AH L OW\nHI\tHH AY\n");
  auto chars = CharTokenizer::build({"HELLO", "HI"}, CharTokenizer::Unit::kCharacter);
  auto phones =
      CharTokenizer::build({"HH AH L OW", "HH AY"}, CharTokenizer::Unit::kWhitespaceSymbol);
  Seq2SeqDataset ds(
      path, [&](std::string_view s) { return chars.encode(s); },
      [&](std::string_view s) { return phones.encode(s); }, 0, 4);
  ASSERT_EQ(ds.size(), 2u);
  EXPECT_EQ(chars.decode(ds.get(0).input_ids), "HELLO");
  EXPECT_EQ(phones.decode(ds.get(0).target_ids), "HH AH L");  // cut to leave room for [EOS]
  EXPECT_EQ(phones.decode(ds.get(1).target_ids), "HH AY");
  std::string bad = dir.write("bad.tsv", "A\tB\tC\n");
  auto id = [](std::string_view) { return std::vector<int32_t>{5}; };
  EXPECT_NE(
      error_of([&] { Seq2SeqDataset(bad, id, id); }).find("bad.tsv:1: expected source<TAB>target"),
      std::string::npos);
}

TEST(CharTokenizer, BuildSaveLoadAndUnknowns) {
  ScratchDir dir;
  auto tok = CharTokenizer::build({"abca", "été"}, CharTokenizer::Unit::kCharacter);
  EXPECT_EQ(tok.vocab().tokens(), (std::vector<std::string>{"[PAD]", "[UNK]", "[BOS]", "[EOS]", "a",
                                                            "b", "c", "t", "é"}));
  EXPECT_EQ(tok.encode("cab?"), (std::vector<int32_t>{6, 4, 5, 1}));
  std::vector<int32_t> ids{2, 8, 7, 8, 3};
  EXPECT_EQ(tok.decode(ids), "été");
  tok.save(dir.file("chars.json"));
  auto loaded = CharTokenizer::load(dir.file("chars.json"));
  EXPECT_EQ(loaded.vocab().tokens(), tok.vocab().tokens());
  EXPECT_EQ(loaded.unit(), CharTokenizer::Unit::kCharacter);
  std::string bad = dir.write("bad.json", "{\"unit\": \"bytes\", \"tokens\": []}");
  EXPECT_NE(error_of([&] { CharTokenizer::load(bad); }).find("key 'unit'"), std::string::npos);
  EXPECT_THROW(tok.encode("\xFF"), Error);
}

TEST(CharTokenizer, PairSplitsSourcesByCharacterAndTargetsBySymbolOverOneVocabulary) {
  ScratchDir dir;
  auto tok = CharTokenizer::build_pair({"THE", "SHE"}, CharTokenizer::Unit::kCharacter,
                                       {"DH AH", "SH IY"}, CharTokenizer::Unit::kWhitespaceSymbol);
  // Letters and phonemes share ids where they are the same symbol ("H" is not a phoneme here).
  EXPECT_EQ(tok.vocab().tokens(),
            (std::vector<std::string>{"[PAD]", "[UNK]", "[BOS]", "[EOS]", "AH", "DH", "E", "H",
                                      "IY", "S", "SH", "T"}));
  EXPECT_EQ(tok.encode("SHE"), (std::vector<int32_t>{9, 7, 6}));
  EXPECT_EQ(tok.encode_target("SH IY"), (std::vector<int32_t>{10, 8}));
  std::vector<int32_t> output{10, 8, 3};
  EXPECT_EQ(tok.decode(output), "SH IY");  // outputs are targets
  std::vector<int32_t> source{9, 7, 6};
  EXPECT_EQ(tok.decode_source(source), "SHE");
  tok.save(dir.file("pair.json"));
  auto loaded = CharTokenizer::load(dir.file("pair.json"));
  EXPECT_EQ(loaded.unit(), CharTokenizer::Unit::kCharacter);
  EXPECT_EQ(loaded.target_unit(), CharTokenizer::Unit::kWhitespaceSymbol);
  EXPECT_EQ(loaded.encode_target("DH AH"), (std::vector<int32_t>{5, 4}));
  // A single-unit tokenizer splits targets like sources and writes no target_unit.
  auto plain = CharTokenizer::build({"ab"}, CharTokenizer::Unit::kCharacter);
  EXPECT_EQ(plain.target_unit(), CharTokenizer::Unit::kCharacter);
  plain.save(dir.file("plain.json"));
  std::ifstream in(dir.file("plain.json"));
  std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(json.find("target_unit"), std::string::npos);
}

}  // namespace
}  // namespace heed::data
