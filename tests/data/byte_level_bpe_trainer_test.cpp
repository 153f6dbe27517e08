#include "data/byte_level_bpe_trainer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/error.h"
#include "data/byte_level_bpe.h"
#include "data/unicode.h"
#include "io/text_file.h"
#include "tests/data/test_util.h"

namespace heed::data {
namespace {

using testing::error_of;
using testing::ScratchDir;
using Merges = std::vector<std::pair<std::string, std::string>>;

std::string fixture(const std::string& name) {
  return std::string(HEED_DATA_TEST_DIR) + "/bpe_train/" + name;
}

// Hugging Face's vocab.json as tokens in id order.
std::vector<std::string> read_tokens(const std::string& path) {
  const nlohmann::json j = nlohmann::json::parse(io::read_text_file(path));
  std::vector<std::string> tokens(j.size());
  for (const auto& [token, id] : j.items()) tokens.at(id.get<size_t>()) = token;
  return tokens;
}

Merges read_merges(const std::string& path) {
  std::istringstream in(io::read_text_file(path));
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "#version: 0.2");
  Merges merges;
  while (std::getline(in, line)) {
    const size_t space = line.find(' ');
    merges.emplace_back(line.substr(0, space), line.substr(space + 1));
  }
  return merges;
}

// scripts/make_bpe_train_fixtures.js: what Hugging Face's trainer made of corpus.txt.
struct Reference {
  std::vector<std::string> tokens = read_tokens(fixture("expected_vocab.json"));
  Merges merges = read_merges(fixture("expected_merges.txt"));
  std::vector<int64_t> counts;  // of each merge's pair when it was made
  size_t alphabet_size = 0;     // the symbols of the corpus, ids 0..alphabet_size-1

  Reference() {
    std::ifstream in(fixture("expected_counts.txt"));
    for (int64_t c; in >> c;) counts.push_back(c);
    alphabet_size = tokens.size() - merges.size();
  }
};

const Reference& reference() {
  static const Reference r;
  return r;
}

// The trainer Hugging Face's Node bindings train with: BpeTrainer's defaults (min_frequency 0,
// no alphabet given) and a size the corpus does not reach.
ByteLevelBpeTrainOptions reference_options() {
  return {.vocab_size = 1'000'000, .min_frequency = 0, .initial_alphabet = false};
}

TrainedByteLevelBpe train_corpus(const ByteLevelBpeTrainOptions& options) {
  return train_byte_level_bpe(std::vector<std::string>{fixture("corpus.txt")}, options);
}

std::string symbol(int byte) {
  std::string s;
  append_utf8(s, bytes_to_unicode()[byte]);
  return s;
}

// The 256 byte symbols in code point order, as pre_tokenizers.ByteLevel.alphabet() is added.
std::vector<std::string> all_symbols() {
  std::vector<int> bytes(256);
  for (int b = 0; b < 256; ++b) bytes[b] = b;
  std::sort(bytes.begin(), bytes.end(),
            [](int a, int b) { return bytes_to_unicode()[a] < bytes_to_unicode()[b]; });
  std::vector<std::string> symbols;
  for (int b : bytes) symbols.push_back(symbol(b));
  return symbols;
}

TEST(ByteLevelBpeTrainer, ReproducesHuggingFaceOnTheCorpus) {
  const Reference& ref = reference();
  ASSERT_GT(ref.merges.size(), 6000u);
  const TrainedByteLevelBpe trained = train_corpus(reference_options());
  EXPECT_EQ(trained.tokens, ref.tokens);
  EXPECT_EQ(trained.merges, ref.merges);
}

// Compact JSON in id order, escapes and all ('"' and '\' are byte symbols), and merges.txt
// with its header: byte for byte the files Hugging Face's model.save writes.
TEST(ByteLevelBpeTrainer, SavesTheFilesHuggingFaceWrites) {
  ScratchDir dir;
  save_byte_level_bpe(train_corpus(reference_options()), dir.file("model"));
  EXPECT_EQ(io::read_text_file(dir.file("model/vocab.json")),
            io::read_text_file(fixture("expected_vocab.json")));
  EXPECT_EQ(io::read_text_file(dir.file("model/merges.txt")),
            io::read_text_file(fixture("expected_merges.txt")));
  EXPECT_EQ(testing::entries_of(dir.file("model")),
            (std::vector<std::string>{"merges.txt", "vocab.json"}));
}

// The 256 symbols sort the corpus's own symbols as before and put every merged token after
// them, so every tie between pairs breaks the same way: the same merges, ids shifted.
TEST(ByteLevelBpeTrainer, TheInitialAlphabetComesFirstAndLeavesTheMerges) {
  const Reference& ref = reference();
  ByteLevelBpeTrainOptions options = reference_options();
  options.initial_alphabet = true;
  const TrainedByteLevelBpe trained = train_corpus(options);
  std::vector<std::string> expected = all_symbols();
  expected.insert(expected.end(), ref.tokens.begin() + ref.alphabet_size, ref.tokens.end());
  EXPECT_EQ(trained.tokens, expected);
  EXPECT_EQ(trained.merges, ref.merges);
}

TEST(ByteLevelBpeTrainer, ASmallerVocabularyStopsAtAPrefixOfTheMerges) {
  const Reference& ref = reference();
  for (size_t merges : {size_t{0}, size_t{1}, size_t{100}, size_t{2500}}) {
    SCOPED_TRACE(merges);
    ByteLevelBpeTrainOptions options = reference_options();
    options.vocab_size = static_cast<int32_t>(ref.alphabet_size + merges);
    const TrainedByteLevelBpe trained = train_corpus(options);
    EXPECT_EQ(trained.tokens, std::vector<std::string>(ref.tokens.begin(),
                                                       ref.tokens.begin() + options.vocab_size));
    EXPECT_EQ(trained.merges, Merges(ref.merges.begin(), ref.merges.begin() + merges));
  }
}

// The counts were replayed independently by the fixture script; a run with min_frequency m
// makes the merges up to the first whose count is below m, and no more.
TEST(ByteLevelBpeTrainer, MinFrequencyStopsWhereTheCountsFallBelowIt) {
  const Reference& ref = reference();
  ASSERT_EQ(ref.counts.size(), ref.merges.size());
  for (int64_t m : {0, 1, 2, 3, 7, 50, 400, 5000}) {
    SCOPED_TRACE(m);
    const auto stop = static_cast<size_t>(
        std::find_if(ref.counts.begin(), ref.counts.end(), [&](int64_t c) { return c < m; }) -
        ref.counts.begin());
    ByteLevelBpeTrainOptions options = reference_options();
    options.min_frequency = m;
    EXPECT_EQ(train_corpus(options).merges, Merges(ref.merges.begin(), ref.merges.begin() + stop));
  }
  // The thresholds above do cut inside the run, and 0 acts as 1 (pairs that no longer occur).
  EXPECT_EQ(ref.counts.back(), 1);
  EXPECT_GT(std::count(ref.counts.begin(), ref.counts.end(), 2), 0);
}

TEST(ByteLevelBpeTrainer, SpecialTokensTakeTheFirstIdsAndAreNeverMerged) {
  const Reference& ref = reference();
  ByteLevelBpeTrainOptions options = reference_options();
  options.special_tokens = {"<s>", "<pad>", "</s>", "<unk>", "<mask>"};
  const TrainedByteLevelBpe trained = train_corpus(options);
  std::vector<std::string> expected = options.special_tokens;
  expected.insert(expected.end(), ref.tokens.begin(), ref.tokens.end());
  EXPECT_EQ(trained.tokens, expected);
  EXPECT_EQ(trained.merges, ref.merges);
}

// ByteLevelBPETokenizer's settings (all 256 symbols, min_frequency 2): the saved files load as
// GPT-2's do, and the tokenizer gives back every line of the corpus.
TEST(ByteLevelBpeTrainer, ASavedModelLoadsAndRoundTripsTheCorpus) {
  ScratchDir dir;
  ByteLevelBpeTrainOptions options;
  options.vocab_size = 2000;
  options.special_tokens = {"<|endoftext|>"};
  const TrainedByteLevelBpe trained = train_corpus(options);
  ASSERT_EQ(trained.tokens.size(), 2000u);
  EXPECT_EQ(trained.tokens[0], "<|endoftext|>");
  save_byte_level_bpe(trained, dir.file("model"));
  const ByteLevelBpe bpe = ByteLevelBpe::load(dir.file("model/vocab.json"),
                                              dir.file("model/merges.txt"), {.cache_capacity = 0});
  ASSERT_EQ(bpe.vocab_size(), 2000);
  for (int32_t id = 0; id < 2000; ++id) EXPECT_EQ(bpe.token(id), trained.tokens[id]);
  const std::string corpus = io::read_text_file(fixture("corpus.txt"));
  EXPECT_EQ(bpe.decode_bytes(bpe.encode(corpus)), corpus);
  // The first merges are Hugging Face's; the most frequent word is one token.
  EXPECT_EQ(trained.merges.front(), reference().merges.front());
  EXPECT_EQ(bpe.encode(" the"), std::vector<int32_t>{*bpe.id("Ġthe")});
}

TEST(ByteLevelBpeTrainer, FilesAndTheirLinesInMemoryTrainAlike) {
  const std::string corpus = io::read_text_file(fixture("corpus.txt"));
  std::vector<std::string> lines;
  for (size_t start = 0; start < corpus.size();) {
    const size_t end = std::min(corpus.find('\n', start), corpus.size() - 1) + 1;
    lines.push_back(corpus.substr(start, end - start));
    start = end;
  }
  ASSERT_EQ(lines.size(), 329u);  // the last without "\n"
  const TrainedByteLevelBpe from_file = train_corpus(reference_options());
  const TrainedByteLevelBpe from_lines = train_byte_level_bpe_on_texts(lines, reference_options());
  EXPECT_EQ(from_lines.tokens, from_file.tokens);
  EXPECT_EQ(from_lines.merges, from_file.merges);
  // Twice the same corpus: every count doubles, nothing else changes.
  const TrainedByteLevelBpe twice = train_byte_level_bpe(
      std::vector<std::string>{fixture("corpus.txt"), fixture("corpus.txt")}, reference_options());
  EXPECT_EQ(twice.merges, from_file.merges);
}

TEST(ByteLevelBpeTrainer, IsDeterministic) {
  ByteLevelBpeTrainOptions options;
  options.vocab_size = 3000;
  const TrainedByteLevelBpe a = train_corpus(options), b = train_corpus(options);
  EXPECT_EQ(a.tokens, b.tokens);
  EXPECT_EQ(a.merges, b.merges);
}

// The hand-worked cases below are also what Hugging Face's trainer gives (each text as a file
// without a newline), save the one with a special token, which its Node bindings cannot pass.
//
// "aaaa" is one word, a a a a, where (a,a) occurs 3 times. Merged left to right without
// overlap it gives aa aa: the (a,a) after the first occurrence is lost, (aa,a) comes and goes,
// (aa,aa) occurs once. Then aa aa -> aaaa.
TEST(ByteLevelBpeTrainer, MergesLeftToRightWithoutOverlap) {
  const TrainedByteLevelBpe trained =
      train_byte_level_bpe_on_texts(std::vector<std::string>{"aaaa"}, reference_options());
  EXPECT_EQ(trained.tokens, (std::vector<std::string>{"a", "aa", "aaaa"}));
  EXPECT_EQ(trained.merges, (Merges{{"a", "a"}, {"aa", "aa"}}));
}

// Two pairs occurring once each: the tie goes to the pair of smaller ids, and ids follow the
// symbols' code points: '!' is U+0021, the tab's symbol 'ĉ' U+0109, so (!,!) comes first
// though the tab's byte, 0x09, is the smaller byte.
TEST(ByteLevelBpeTrainer, TiesGoToTheSmallerIdsInCodePointOrder) {
  const TrainedByteLevelBpe trained =
      train_byte_level_bpe_on_texts(std::vector<std::string>{"\t\t", "!!"}, reference_options());
  EXPECT_EQ(trained.tokens, (std::vector<std::string>{"!", "ĉ", "!!", "ĉĉ"}));
  EXPECT_EQ(trained.merges, (Merges{{"!", "!"}, {"ĉ", "ĉ"}}));
}

// (a,b) occurs 3 times, (c,d) twice, (e,f) once (each text is one word).
TEST(ByteLevelBpeTrainer, MinFrequencyOnAHandWorkedCorpus) {
  const std::vector<std::string> texts{"ab", "ab", "ab", "cd", "cd", "ef"};
  const auto merges_at = [&](int64_t min_frequency) {
    ByteLevelBpeTrainOptions options = reference_options();
    options.min_frequency = min_frequency;
    return train_byte_level_bpe_on_texts(texts, options).merges;
  };
  const Merges all{{"a", "b"}, {"c", "d"}, {"e", "f"}};
  EXPECT_EQ(merges_at(0), all);
  EXPECT_EQ(merges_at(1), all);
  EXPECT_EQ(merges_at(2), Merges(all.begin(), all.begin() + 2));
  EXPECT_EQ(merges_at(3), Merges(all.begin(), all.begin() + 1));
  EXPECT_EQ(merges_at(4), Merges{});
}

// Hugging Face's run with the pre-tokenizer's add_prefix_space: the same alphabet, then one
// new token per merge.
TEST(ByteLevelBpeTrainer, ReproducesHuggingFaceWithAPrefixSpace) {
  const Reference& ref = reference();
  const Merges expected = read_merges(fixture("expected_prefix_space_merges.txt"));
  ASSERT_NE(expected, ref.merges);
  ByteLevelBpeTrainOptions options = reference_options();
  options.add_prefix_space = true;
  const TrainedByteLevelBpe trained = train_corpus(options);
  EXPECT_EQ(trained.merges, expected);
  std::vector<std::string> tokens(ref.tokens.begin(), ref.tokens.begin() + ref.alphabet_size);
  for (const auto& [left, right] : expected) tokens.push_back(left + right);
  EXPECT_EQ(trained.tokens, tokens);
}

// The ByteLevel pre-tokenizer's rule: a space unless the text starts with ' ' (a tab is not
// one), and none for an empty text.
TEST(ByteLevelBpeTrainer, PrefixSpaceUnlessTheTextStartsWithASpace) {
  ByteLevelBpeTrainOptions options = reference_options();
  options.add_prefix_space = true;
  const TrainedByteLevelBpe trained =
      train_byte_level_bpe_on_texts(std::vector<std::string>{"hi", " hi", "\thi", ""}, options);
  // Words: "Ġhi" twice, then " \thi" cut into "Ġ", "ĉ", "hi".
  EXPECT_EQ(trained.tokens, (std::vector<std::string>{"h", "i", "ĉ", "Ġ", "hi", "Ġhi"}));
  EXPECT_EQ(trained.merges, (Merges{{"h", "i"}, {"Ġ", "hi"}}));
}

// "hid" twice, "hi" once, and a special token "hi": ids hi=0, then d h i. (h,i) occurs 3 times
// and makes "hi", which is token 0 already: the vocabulary stays at 4 and the merge keeps the
// next size step for (hi,d), which occurs twice. A size of 5 so has room for both merges.
TEST(ByteLevelBpeTrainer, AMergeMakingASpecialTokenTakesItsIdAndSize) {
  ByteLevelBpeTrainOptions options = reference_options();
  options.special_tokens = {"hi"};
  options.vocab_size = 5;
  const TrainedByteLevelBpe trained =
      train_byte_level_bpe_on_texts(std::vector<std::string>{"hid", "hid", "hi"}, options);
  EXPECT_EQ(trained.tokens, (std::vector<std::string>{"hi", "d", "h", "i", "hid"}));
  EXPECT_EQ(trained.merges, (Merges{{"h", "i"}, {"hi", "d"}}));
}

TEST(ByteLevelBpeTrainer, ASizeBelowTheAlphabetIsRefusedNamingTheMinimum) {
  ByteLevelBpeTrainOptions options;  // all 256 symbols
  options.special_tokens = {"<s>", "</s>"};
  options.vocab_size = 257;
  EXPECT_EQ(error_of([&] { train_corpus(options); }),
            "byte-level BPE training: vocab_size 257 is below the minimum for this corpus, 258: "
            "its 2 special tokens and 256 byte symbols");
  options.vocab_size = 258;
  const TrainedByteLevelBpe smallest = train_corpus(options);
  EXPECT_EQ(smallest.tokens.size(), 258u);
  EXPECT_TRUE(smallest.merges.empty());
}

TEST(ByteLevelBpeTrainer, UnreadableFilesAndInvalidTextAreErrorsNamingThem) {
  ScratchDir dir;
  const ByteLevelBpeTrainOptions options;
  const std::string missing = dir.file("missing.txt");
  EXPECT_EQ(error_of([&] { train_byte_level_bpe(std::vector<std::string>{missing}, options); }),
            "cannot read " + missing + ": No such file or directory");
  const std::string sub = dir.file("sub");
  std::filesystem::create_directories(sub);
  EXPECT_EQ(error_of([&] { train_byte_level_bpe(std::vector<std::string>{sub}, options); }),
            sub + ": is a directory, not a file");
  const std::string bad = dir.write("bad.txt", "fine\nab\xC3(\n");
  EXPECT_EQ(error_of([&] { train_byte_level_bpe(std::vector<std::string>{bad}, options); }),
            bad + ":2: invalid UTF-8 at byte 2 of the line");
  EXPECT_EQ(error_of([&] {
              train_byte_level_bpe_on_texts(std::vector<std::string>{"ok", "\xFF"}, options);
            }),
            "byte-level BPE training: text 1 is not valid UTF-8 (byte 0 is 0xFF)");
}

TEST(ByteLevelBpeTrainer, BadOptionsAreRefused) {
  const std::vector<std::string> texts{"hello"};
  const auto error_with = [&](ByteLevelBpeTrainOptions options) {
    return error_of([&] { train_byte_level_bpe_on_texts(texts, options); });
  };
  EXPECT_EQ(error_with({.vocab_size = 0}),
            "byte-level BPE training: vocab_size must be positive, not 0");
  EXPECT_EQ(error_with({.min_frequency = -1}),
            "byte-level BPE training: min_frequency must be 0 or more, not -1");
  EXPECT_EQ(error_with({.special_tokens = {"<s>", ""}}),
            "byte-level BPE training: a special token is empty");
  EXPECT_EQ(error_with({.special_tokens = {"<s>", "<pad>", "<s>"}}),
            "byte-level BPE training: the special token '<s>' is listed twice");
}

}  // namespace
}  // namespace heed::data
