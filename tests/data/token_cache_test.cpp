#include "data/token_cache.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "base/error.h"
#include "data/datasets.h"
#include "data/text_tokenizer.h"
#include "tests/data/test_util.h"

namespace heed::data {
namespace {

using testing::error_of;
using testing::golden_path;
using testing::ScratchDir;

const char* kCorpus =
    "The quick brown fox.\n"
    "The lazy dog!\n"
    "\n"
    "\n"
    "hello world\n"
    "\n"
    "我是中国人\n";

TEST(TokenCache, BuildsDocumentsAndReopensWithoutRebuilding) {
  ScratchDir dir;
  auto tok = WordPieceTokenizer::from_file(golden_path("vocab.txt"));
  std::string corpus = dir.write("corpus.txt", kCorpus);
  std::string cache_path = dir.file("corpus.cache");
  std::vector<std::string> log;
  auto on_log = [&](const std::string& s) { log.push_back(s); };
  {
    TokenCache cache = TokenCache::open_or_build(corpus, cache_path, TextTokenizer(tok), on_log);
    ASSERT_EQ(log.size(), 1u);
    EXPECT_NE(log[0].find("no cache yet"), std::string::npos);
    EXPECT_EQ(cache.id_bytes(), 2);
    ASSERT_EQ(cache.num_documents(), 3u);
    std::vector<int32_t> doc0(cache.document_end(0));
    cache.copy(0, cache.document_end(0), doc0.data());
    std::vector<int32_t> expected = tok.encode_ids("The quick brown fox.");
    auto second = tok.encode_ids("The lazy dog!");
    expected.insert(expected.end(), second.begin(), second.end());
    EXPECT_EQ(doc0, expected);
    EXPECT_EQ(cache.document_end(2) - cache.document_begin(2), 5u);  // five ideographs
    EXPECT_EQ(cache.num_tokens(), cache.document_end(2));
  }
  TokenCache again = TokenCache::open_or_build(corpus, cache_path, TextTokenizer(tok), on_log);
  EXPECT_EQ(log.size(), 1u);  // reused
  EXPECT_EQ(again.num_documents(), 3u);
}

TEST(TokenCache, RebuildsWhenCorpusOrVocabularyChanges) {
  ScratchDir dir;
  auto tok = WordPieceTokenizer::from_file(golden_path("vocab.txt"));
  std::string corpus = dir.write("corpus.txt", kCorpus);
  std::string cache_path = dir.file("c.cache");
  std::vector<std::string> log;
  auto on_log = [&](const std::string& s) { log.push_back(s); };
  TokenCache::open_or_build(corpus, cache_path, TextTokenizer(tok), on_log);
  // Same size, different content: still detected.
  std::string changed = kCorpus;
  changed[4] = 'l';
  dir.write("corpus.txt", changed);
  EXPECT_NE(error_of([&] {
              TokenCache::open(cache_path, corpus, TextTokenizer(tok));
            }).find("the corpus changed"),
            std::string::npos);
  TokenCache::open_or_build(corpus, cache_path, TextTokenizer(tok), on_log);
  ASSERT_EQ(log.size(), 2u);
  EXPECT_NE(log[1].find("the corpus changed"), std::string::npos);
  // Another vocabulary (one token appended) or other options: rebuilt.
  auto tokens = tok.vocab().tokens();
  tokens.push_back("extra");
  WordPieceTokenizer other{Vocab(tokens)};
  TokenCache::open_or_build(corpus, cache_path, TextTokenizer(other), on_log);
  ASSERT_EQ(log.size(), 3u);
  EXPECT_NE(log[2].find("tokenizer or vocabulary changed"), std::string::npos);
  WordPieceOptions cased_options;
  cased_options.lowercase = false;
  WordPieceTokenizer cased(Vocab(tokens), cased_options);
  TokenCache::open_or_build(corpus, cache_path, TextTokenizer(cased), on_log);
  EXPECT_EQ(log.size(), 4u);
}

TEST(TokenCache, CorruptFilesAreClearErrors) {
  ScratchDir dir;
  auto tok = WordPieceTokenizer::from_file(golden_path("vocab.txt"));
  std::string corpus = dir.write("corpus.txt", kCorpus);
  std::string cache_path = dir.file("c.cache");
  TokenCache::build(corpus, cache_path, TextTokenizer(tok));
  const auto size = std::filesystem::file_size(cache_path);
  std::filesystem::resize_file(cache_path, size - 3);
  EXPECT_NE(error_of([&] {
              TokenCache::open_or_build(corpus, cache_path, TextTokenizer(tok));
            }).find("truncated or corrupt token cache"),
            std::string::npos);
  std::filesystem::resize_file(cache_path, 20);
  EXPECT_NE(error_of([&] {
              TokenCache::open_or_build(corpus, cache_path, TextTokenizer(tok));
            }).find("truncated token cache header"),
            std::string::npos);
  std::string not_cache = dir.write("notes.txt", "these are my notes, not a cache");
  EXPECT_NE(error_of([&] {
              TokenCache::open_or_build(corpus, not_cache, TextTokenizer(tok));
            }).find("not a heed token cache"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              TokenCache::build(dir.file("absent.txt"), cache_path, TextTokenizer(tok));
            }).find("absent.txt"),
            std::string::npos);
}

// A cache whose write fails (a full disk) leaves nothing behind, neither a truncated cache
// nor its temporary file; the next build, with room, writes it.
TEST(TokenCache, AFailedWriteLeavesNoFile) {
  ScratchDir dir;
  auto tok = WordPieceTokenizer::from_file(golden_path("vocab.txt"));
  std::string text;
  for (int i = 0; i < 200; ++i) text += "The quick brown fox jumps over the lazy dog.\n\n";
  const std::string corpus = dir.write("corpus.txt", text);
  const std::string cache_path = dir.file("corpus.cache");
  {
    testing::FileSizeLimit limit(4096);
    EXPECT_NE(error_of([&] {
                TokenCache::build(corpus, cache_path, TextTokenizer(tok));
              }).find("write failed"),
              std::string::npos);
  }
  EXPECT_EQ(testing::entries_of(dir.file("")), std::vector<std::string>{"corpus.txt"});
  TokenCache cache = TokenCache::build(corpus, cache_path, TextTokenizer(tok));
  EXPECT_EQ(cache.num_documents(), 200u);
}

TEST(TokenCache, InvalidUtf8InCorpusNamesTheLine) {
  ScratchDir dir;
  auto tok = WordPieceTokenizer::from_file(golden_path("vocab.txt"));
  std::string corpus = dir.write("corpus.txt", "hello\nworld\xC3\n");
  EXPECT_NE(error_of([&] {
              TokenCache::build(corpus, dir.file("c"), TextTokenizer(tok));
            }).find("corpus.txt:2: "),
            std::string::npos);
}

TEST(TokenWindows, MlmAndCausalWindows) {
  ScratchDir dir;
  auto tok = WordPieceTokenizer::from_file(golden_path("vocab.txt"));
  // Documents of 3 and 2 tokens (ids: the=7 quick=9 fox=11 | lazy=16 dog=17).
  std::string corpus = dir.write("corpus.txt", "the quick\nfox\n\nlazy dog\n");
  auto cache =
      std::make_shared<TokenCache>(TokenCache::build(corpus, dir.file("c"), TextTokenizer(tok)));
  MlmWindowDataset mlm(cache, tok.cls_id(), tok.sep_id(), 4);
  ASSERT_EQ(mlm.size(), 3u);  // [the quick] [fox] [lazy dog]: windows never cross documents
  EXPECT_EQ(mlm.get(0).input_ids, (std::vector<int32_t>{3, 7, 9, 4}));
  EXPECT_EQ(mlm.get(1).input_ids, (std::vector<int32_t>{3, 11, 4}));
  EXPECT_EQ(mlm.get(2).input_ids, (std::vector<int32_t>{3, 16, 17, 4}));
  // Stream: the quick fox [SEP] lazy dog [SEP] (7 tokens); windows of 3+1 with stride 3.
  CausalWindowDataset lm(cache, tok.sep_id(), 3);
  EXPECT_EQ(lm.stream_length(), 7u);
  ASSERT_EQ(lm.size(), 2u);
  EXPECT_EQ(lm.get(0).input_ids, (std::vector<int32_t>{7, 9, 11, 4}));
  EXPECT_EQ(lm.get(1).input_ids, (std::vector<int32_t>{4, 16, 17, 4}));
  // 7 stream tokens over the 24 bytes of the file.
  ASSERT_TRUE(lm.tokens_per_byte().has_value());
  EXPECT_DOUBLE_EQ(*lm.tokens_per_byte(), 7.0 / 24.0);
  // The masked LM's windows count the corpus's 5 tokens, not the [CLS] and [SEP] they add.
  ASSERT_TRUE(mlm.tokens_per_byte().has_value());
  EXPECT_DOUBLE_EQ(*mlm.tokens_per_byte(), 5.0 / 24.0);
  // Packed windows (span corruption's) tile the same stream without overlap; the last window
  // keeps its 2 tokens.
  PackedWindowDataset packed(cache, tok.sep_id(), 5);
  ASSERT_EQ(packed.size(), 2u);
  EXPECT_EQ(packed.get(0).input_ids, (std::vector<int32_t>{7, 9, 11, 4, 16}));
  EXPECT_EQ(packed.get(1).input_ids, (std::vector<int32_t>{17, 4}));
  EXPECT_EQ(PackedWindowDataset(cache, tok.sep_id(), 3).size(),
            2u);  // a lone last token: no window
  EXPECT_FALSE(packed.tokens_per_byte().has_value());
}

// A byte-level BPE cache keeps each line's end, so a document's ids spell its lines exactly:
// the stream a GPT reads is the text, and bits per byte count every byte of it.
TEST(TokenCache, ByteLevelBpeDocumentsSpellTheirLinesExactly) {
  ScratchDir dir;
  const std::string data = std::string(HEED_DATA_TEST_DIR) + "/gpt2/";
  const TextTokenizer tok(
      BpeTokenizer::gpt2(ByteLevelBpe::load(data + "vocab.json", data + "merges.txt")));
  const std::string first = "The quick fox.\n  Runs, naïvely!\n", second = "日本語 🙂\n";
  std::string corpus = dir.write("corpus.txt", first + "\n" + second);
  TokenCache cache = TokenCache::build(corpus, dir.file("c"), tok);
  ASSERT_EQ(cache.num_documents(), 2u);
  EXPECT_EQ(cache.corpus_bytes(), first.size() + 1 + second.size());
  auto text_of = [&](uint64_t doc) {
    std::vector<int32_t> ids(cache.document_end(doc) - cache.document_begin(doc));
    cache.copy(cache.document_begin(doc), cache.document_end(doc), ids.data());
    return tok.decode(ids);
  };
  EXPECT_EQ(text_of(0), first);
  EXPECT_EQ(text_of(1), second);
  // Another tokenizer kind over the same corpus is another cache.
  auto wordpiece = WordPieceTokenizer::from_file(golden_path("vocab.txt"));
  EXPECT_NE(error_of([&] {
              TokenCache::open(dir.file("c"), corpus, TextTokenizer(wordpiece));
            }).find("the tokenizer or vocabulary changed"),
            std::string::npos);
}

}  // namespace
}  // namespace heed::data
