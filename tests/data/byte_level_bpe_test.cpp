#include "data/byte_level_bpe.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "base/error.h"
#include "data/unicode.h"
#include "tests/data/test_util.h"

namespace heed::data {
namespace {

using testing::ScratchDir;

std::string gpt2_path(const std::string& name) {
  return std::string(HEED_DATA_TEST_DIR) + "/gpt2/" + name;
}

// Loaded once: the 50,257 tokens and 50,000 merges take a moment to read.
const ByteLevelBpe& gpt2() {
  static const ByteLevelBpe bpe =
      ByteLevelBpe::load(gpt2_path("vocab.json"), gpt2_path("merges.txt"));
  return bpe;
}

nlohmann::json fixture_cases() {
  std::ifstream in(gpt2_path("expected_ids.json"));
  EXPECT_TRUE(in.good());
  return nlohmann::json::parse(in);
}

std::string utf8(std::u32string_view cps) {
  return encode_utf8(cps);
}

TEST(BytesToUnicode, PrintableBytesStandForThemselvesTheRestFollowU0100) {
  const auto& table = bytes_to_unicode();
  EXPECT_EQ(std::set<char32_t>(table.begin(), table.end()).size(), 256u);
  char32_t next = 0x100;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
    EXPECT_EQ(table[b], printable ? char32_t(b) : next++) << "byte " << b;
  }
  EXPECT_EQ(next, char32_t(0x100 + 68));
  EXPECT_EQ(table[' '], U'Ġ');
  EXPECT_EQ(table['\n'], U'Ċ');
}

// The ids tiktoken's gpt2 encoding gives (and gpt-3-encoder, save two texts the README
// explains), written by scripts/make_bpe_fixtures.js.
TEST(ByteLevelBpe, MatchesTiktokenOnEveryFixtureText) {
  const nlohmann::json cases = fixture_cases();
  ASSERT_GE(cases.size(), 40u);
  for (const auto& c : cases) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const std::string text = c["text"];
    const std::vector<int32_t> ids = gpt2().encode(text);
    EXPECT_EQ(ids, c["ids"].get<std::vector<int32_t>>());
    EXPECT_EQ(gpt2().decode_bytes(ids), text);
    EXPECT_EQ(gpt2().decode(ids), text);
  }
}

TEST(ByteLevelBpe, VocabularyLookups) {
  const ByteLevelBpe& bpe = gpt2();
  EXPECT_EQ(bpe.vocab_size(), 50257);
  EXPECT_EQ(bpe.token(50256), "<|endoftext|>");
  EXPECT_EQ(bpe.id("<|endoftext|>"), 50256);
  EXPECT_EQ(bpe.id("Ġhello"), 23748);
  EXPECT_EQ(bpe.token(23748), "Ġhello");
  EXPECT_EQ(bpe.id("no such token"), std::nullopt);
  EXPECT_THROW(bpe.token(50257), Error);
  EXPECT_THROW(bpe.token(-1), Error);
  // A special token decodes to its spelling; an unknown id is an error, not a blank.
  EXPECT_EQ(bpe.decode(std::vector<int32_t>{15496, 50256}), "Hello<|endoftext|>");
  EXPECT_THROW(bpe.decode(std::vector<int32_t>{50257}), Error);
  EXPECT_THROW(bpe.decode_bytes(std::vector<int32_t>{-1}), Error);
}

// Expectations from Python's regex module running GPT-2's pattern (encoder.py's engine).
TEST(ByteLevelBpe, PreTokenizesAsPythonsRegex) {
  using Words = std::vector<std::string>;
  const ByteLevelBpe& bpe = gpt2();
  EXPECT_EQ(bpe.pre_tokenize("Hello  world\n\n  x"),
            (Words{"Hello", " ", " world", "\n\n ", " x"}));
  EXPECT_EQ(bpe.pre_tokenize("a\u0085b \u0085c"), (Words{"a", "\u0085", "b", " ", "\u0085", "c"}));
  EXPECT_EQ(bpe.pre_tokenize("'S's'sa  \t"), (Words{"'", "S", "'s", "'s", "a", "  \t"}));
  EXPECT_EQ(bpe.pre_tokenize("trailing   "), (Words{"trailing", "   "}));
  EXPECT_EQ(bpe.pre_tokenize("x\v\x1c y"), (Words{"x", "\v", "\x1c", " y"}));
  EXPECT_EQ(bpe.pre_tokenize("1,234.5 kg!!"), (Words{"1", ",", "234", ".", "5", " kg", "!!"}));
  EXPECT_EQ(bpe.pre_tokenize("cafe\u0301!"), (Words{"cafe", "\u0301!"}));
  EXPECT_EQ(bpe.pre_tokenize(""), Words{});
}

// Random valid UTF-8 from every encoded length (1 to 4 bytes), with the whitespace, marks and
// controls that the pattern treats specially.
std::string random_text(std::mt19937& rng) {
  static const std::vector<std::pair<char32_t, char32_t>> ranges = {
      {0x00, 0x7F},     {0x20, 0x20},        {0x80, 0x7FF},      {0x800, 0xD7FF},
      {0xE000, 0xFFFF}, {0x10000, 0x10FFFF}, {0x1F300, 0x1F6FF}, {0x0300, 0x036F},
      {0x2000, 0x200D}, {0x3000, 0x3000},    {0x85, 0x85},       {'a', 'z'}};
  std::uniform_int_distribution<size_t> length(0, 24), pick(0, ranges.size() - 1);
  std::u32string cps;
  for (size_t n = length(rng); cps.size() < n;) {
    const auto [lo, hi] = ranges[pick(rng)];
    cps.push_back(std::uniform_int_distribution<char32_t>(lo, hi)(rng));
  }
  return utf8(cps);
}

TEST(ByteLevelBpe, RandomUtf8RoundTrips) {
  std::mt19937 rng(58);
  for (int i = 0; i < 2000; ++i) {
    const std::string text = random_text(rng);
    const std::vector<int32_t> ids = gpt2().encode(text);
    ASSERT_EQ(gpt2().decode(ids), text) << "text #" << i;
  }
}

// OpenAI's encoder.py bpe(), pass by pass over strings: the reference for the heap in
// merge_word. `ranks` maps "a b" to its line.
std::vector<std::string> reference_bpe(const std::vector<std::string>& symbols,
                                       const std::map<std::string, size_t>& ranks) {
  std::vector<std::string> word = symbols;
  while (word.size() > 1) {
    size_t best = SIZE_MAX;
    for (size_t i = 0; i + 1 < word.size(); ++i) {
      auto it = ranks.find(word[i] + " " + word[i + 1]);
      if (it != ranks.end()) best = std::min(best, it->second);
    }
    if (best == SIZE_MAX) break;
    std::vector<std::string> merged;
    for (size_t i = 0; i < word.size(); ++i) {
      const auto it = i + 1 < word.size() ? ranks.find(word[i] + " " + word[i + 1]) : ranks.end();
      if (it != ranks.end() && it->second == best) {
        merged.push_back(word[i] + word[i + 1]);
        ++i;
      } else {
        merged.push_back(word[i]);
      }
    }
    word = std::move(merged);
  }
  return word;
}

std::map<std::string, size_t> read_ranks(const std::string& merges_txt) {
  std::ifstream in(merges_txt);
  std::map<std::string, size_t> ranks;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with("#version")) ranks.emplace(line, ranks.size());
  }
  return ranks;
}

// The ids the reference gives for `text`, cut into words by the tokenizer's own pattern.
std::vector<int32_t> reference_encode(const ByteLevelBpe& bpe, std::string_view text,
                                      const std::map<std::string, size_t>& ranks) {
  std::vector<int32_t> ids;
  for (const std::string& word : bpe.pre_tokenize(text)) {
    std::vector<std::string> symbols;
    for (unsigned char b : word) symbols.push_back(utf8(std::u32string(1, bytes_to_unicode()[b])));
    for (const std::string& piece : reference_bpe(symbols, ranks)) ids.push_back(*bpe.id(piece));
  }
  return ids;
}

TEST(ByteLevelBpe, MergesAsEncoderPyOnRandomTextAndLongWords) {
  const auto ranks = read_ranks(gpt2_path("merges.txt"));
  ASSERT_EQ(ranks.size(), 50000u);
  std::mt19937 rng(7);
  std::vector<std::string> texts;
  for (int i = 0; i < 200; ++i) texts.push_back(random_text(rng));
  std::uniform_int_distribution<int> letter('a', 'e');
  for (int n : {60, 200, 400}) {
    std::string word;
    for (int i = 0; i < n; ++i) word.push_back(static_cast<char>(letter(rng)));
    texts.push_back(word);
  }
  for (const std::string& text : texts) {
    ASSERT_EQ(gpt2().encode(text), reference_encode(gpt2(), text, ranks)) << text;
  }
}

// A vocabulary of the 256 byte symbols plus `extra` tokens, ids in that order, as vocab.json.
std::string byte_vocab_json(const std::vector<std::string>& extra, int skip_byte = -1) {
  nlohmann::json j = nlohmann::json::object();
  int32_t id = 0;
  for (int b = 0; b < 256; ++b) {
    if (b != skip_byte) j[utf8(std::u32string(1, bytes_to_unicode()[b]))] = id++;
  }
  for (const std::string& t : extra) j[t] = id++;
  return j.dump();
}

// Merges ranked so that a merge can make a pair that outranks the pair being merged ("aa a"
// before "a a"), which encoder.py only considers on its next pass.
TEST(ByteLevelBpe, MergeOrderFollowsEncoderPyOnAnAwkwardRanking) {
  ScratchDir dir;
  const std::vector<std::string> merges = {"aa a",   "b a", "a a",    "aa aa",  "ba b",
                                           "aaa ba", "a b", "bab aa", "aaaa aa"};
  std::vector<std::string> tokens;
  std::string merges_txt = "#version: 0.2\n";
  for (const std::string& m : merges) {
    const size_t space = m.find(' ');
    tokens.push_back(m.substr(0, space) + m.substr(space + 1));
    merges_txt += m + "\n";
  }
  const ByteLevelBpe bpe = ByteLevelBpe::load(dir.write("vocab.json", byte_vocab_json(tokens)),
                                              dir.write("merges.txt", merges_txt));
  const auto ranks = read_ranks(dir.file("merges.txt"));
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> coin(0, 3), length(1, 30);
  for (int i = 0; i < 500; ++i) {
    std::string word;
    for (int n = length(rng); n > 0; --n) word.push_back(coin(rng) == 0 ? 'b' : 'a');
    ASSERT_EQ(bpe.encode(word), reference_encode(bpe, word, ranks)) << word;
  }
  // "a a" merges left to right once per pass: "aa a", then "aa a" -> "aaa".
  EXPECT_EQ(bpe.encode("aaa"), (std::vector<int32_t>{*bpe.id("aaa")}));
}

TEST(ByteLevelBpe, AddPrefixSpaceSpellsTheFirstWordAsInsideASentence) {
  ByteLevelBpeOptions options;
  options.add_prefix_space = true;
  const ByteLevelBpe roberta =
      ByteLevelBpe::load(gpt2_path("vocab.json"), gpt2_path("merges.txt"), options);
  EXPECT_EQ(gpt2().encode("hello"), (std::vector<int32_t>{31373}));
  EXPECT_EQ(gpt2().encode(" hello"), (std::vector<int32_t>{23748}));
  EXPECT_EQ(roberta.encode("hello"), (std::vector<int32_t>{23748}));
  EXPECT_EQ(roberta.encode("hello world"), gpt2().encode(" hello world"));
  // No second space before leading whitespace, and none into an empty text (transformers'
  // prepare_for_tokenization).
  EXPECT_EQ(roberta.encode(" hello"), (std::vector<int32_t>{23748}));
  EXPECT_EQ(roberta.encode("\nhello"), gpt2().encode("\nhello"));
  EXPECT_EQ(roberta.encode("\u3000x"), gpt2().encode("\u3000x"));
  EXPECT_EQ(roberta.encode(""), std::vector<int32_t>{});
  // Decoding keeps the space: it is part of the text the model saw.
  EXPECT_EQ(roberta.decode(roberta.encode("hello")), " hello");
}

TEST(ByteLevelBpe, TheWordCacheNeverChangesTheIds) {
  for (size_t capacity : {size_t{0}, size_t{3}}) {
    ByteLevelBpeOptions options;
    options.cache_capacity = capacity;
    const ByteLevelBpe bpe =
        ByteLevelBpe::load(gpt2_path("vocab.json"), gpt2_path("merges.txt"), options);
    for (int pass = 0; pass < 2; ++pass) {
      for (const auto& c : fixture_cases()) {
        ASSERT_EQ(bpe.encode(c["text"].get<std::string>()), c["ids"].get<std::vector<int32_t>>())
            << "capacity " << capacity << ", " << c["name"];
      }
    }
  }
}

TEST(ByteLevelBpe, LongRunsOfWhitespaceAndLetters) {
  // Past what ICU's default backtracking stack allows for "\s+(?!\S)" (under 500,000).
  const std::string spaces(600000, ' ');
  EXPECT_EQ(gpt2().decode(gpt2().encode(spaces + "x" + spaces)), spaces + "x" + spaces);
  const std::string letters(20000, 'q');
  EXPECT_EQ(gpt2().decode(gpt2().encode(letters)), letters);
}

// GPT-2, Hugging Face and tiktoken take decoded text, so invalid bytes have no encoding to
// copy: they are refused, naming the offset.
TEST(ByteLevelBpe, InvalidUtf8IsRefusedNamingTheByte) {
  for (const auto& [text, offset] : std::vector<std::pair<std::string, size_t>>{
           {"ab\xC3", 2}, {"ok \xED\xA0\x80", 3}, {"\xFF", 0}, {"x\xC0\xAF", 1}}) {
    try {
      gpt2().encode(text);
      ADD_FAILURE() << "no error for invalid UTF-8 at " << offset;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("byte " + std::to_string(offset)), std::string::npos)
          << e.what();
    }
  }
}

// Python's bytes.decode("utf-8", errors="replace") on each input, as transformers decodes.
TEST(ReplaceInvalidUtf8, OneReplacementPerMaximalSubpart) {
  const std::string r = "\uFFFD";
  EXPECT_EQ(replace_invalid_utf8("plain \u00e9\U0001F355"), "plain \u00e9\U0001F355");
  EXPECT_EQ(replace_invalid_utf8("\xF0\x80\x80"), r + r + r);
  EXPECT_EQ(replace_invalid_utf8("\xED\xA0\x80"), r + r + r);
  EXPECT_EQ(replace_invalid_utf8("\xC0\xAF"), r + r);
  EXPECT_EQ(replace_invalid_utf8("\xE2\x82"), r);
  EXPECT_EQ(replace_invalid_utf8("\xE2\x82"
                                 "A"),
            r + "A");
  EXPECT_EQ(replace_invalid_utf8("\xF4\x90\x80\x80"), r + r + r + r);
  EXPECT_EQ(replace_invalid_utf8("\xE0\x80\xAF"), r + r + r);
  EXPECT_EQ(replace_invalid_utf8("\xFF"), r);
  EXPECT_EQ(replace_invalid_utf8("a\xF0\x9F\x8D\x95\xF0\x9F"), "a\U0001F355" + r);
  EXPECT_EQ(replace_invalid_utf8("\xF0\x9F\x8D\xC3\xA9"), r + "\u00e9");
}

TEST(ByteLevelBpe, IdsThatSplitACharacterDecodeToReplacementCharacters) {
  // tiktoken: "🍕" is F0 9F | 8D | 95.
  const std::vector<int32_t> pizza = gpt2().encode("\U0001F355");
  ASSERT_EQ(pizza, (std::vector<int32_t>{8582, 235, 243}));
  EXPECT_EQ(gpt2().decode(std::vector<int32_t>{8582}), "\uFFFD");
  EXPECT_EQ(gpt2().decode(std::vector<int32_t>{8582, 235}), "\uFFFD");
  EXPECT_EQ(gpt2().decode(std::vector<int32_t>{235, 243}), "\uFFFD\uFFFD");
  EXPECT_EQ(gpt2().decode(std::vector<int32_t>{8582, 15496}), "\uFFFDHello");
  EXPECT_EQ(gpt2().decode_bytes(std::vector<int32_t>{8582, 235}), "\xF0\x9F\x8D");
}

// The message of the error loading the two files gives, or "" when they load.
std::string load_error(const std::string& vocab_json, const std::string& merges_txt) {
  try {
    ByteLevelBpe::load(vocab_json, merges_txt);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// A small valid pair of files: merges "Ġ t", "h e", "Ġt he" on top of the byte symbols.
struct TinyFiles {
  std::string vocab = byte_vocab_json({"Ġt", "he", "Ġthe"});
  std::string merges = "#version: 0.2\nĠ t\nh e\nĠt he\n";
};

TEST(ByteLevelBpe, TheTinyFilesLoad) {
  ScratchDir dir;
  TinyFiles tiny;
  const ByteLevelBpe bpe =
      ByteLevelBpe::load(dir.write("vocab.json", tiny.vocab), dir.write("merges.txt", tiny.merges));
  EXPECT_EQ(bpe.encode("a the"), (std::vector<int32_t>{*bpe.id("a"), 258}));
  // Without a header line, and with Windows line ends and no final newline, the same.
  const ByteLevelBpe crlf =
      ByteLevelBpe::load(dir.file("vocab.json"), dir.write("crlf.txt", "Ġ t\r\nh e\r\nĠt he"));
  EXPECT_EQ(crlf.encode("a the"), bpe.encode("a the"));
}

TEST(ByteLevelBpe, BadVocabularyFilesNameTheFile) {
  ScratchDir dir;
  TinyFiles tiny;
  const std::string merges = dir.write("merges.txt", tiny.merges);
  const std::string other_ids = R"({"a": 0, "b": 0})";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[1, 2]", "JSON object"},
      {"{}", "empty"},
      {tiny.vocab.substr(0, tiny.vocab.size() / 2), "not valid JSON"},
      {R"({"a": 1.5})", "whole number"},
      {R"({"a": "0"})", "whole number"},
      {R"({"a": -1})", "must run from 0"},
      {R"({"a": 0, "b": 5})", "must run from 0"},
      {other_ids, "both have id 0"},
      {R"({"a": 0, "a": 1})", "listed twice"},
      {byte_vocab_json({"Ġt", "he", "Ġthe"}, 0x41), "no token for byte 0x41"},
  };
  for (const auto& [content, what] : cases) {
    const std::string path = dir.write("vocab.json", content);
    const std::string message = load_error(path, merges);
    EXPECT_NE(message.find(path), std::string::npos) << content << " -> " << message;
    EXPECT_NE(message.find(what), std::string::npos) << content << " -> " << message;
  }
  EXPECT_NE(load_error(dir.file("absent.json"), merges).find(dir.file("absent.json")),
            std::string::npos);
  EXPECT_NE(load_error(dir.file(""), merges).find("directory"), std::string::npos);
}

TEST(ByteLevelBpe, BadMergesNameTheFileAndLine) {
  ScratchDir dir;
  TinyFiles tiny;
  const std::string vocab = dir.write("vocab.json", byte_vocab_json({"Ġt", "he", "Ġthe", "ab"}));
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {"Ġ t\nĠt\n", ":2:", "not a merge"},
      {"Ġ t\na b c\n", ":2:", "not a merge"},
      {"Ġ t\na  b\n", ":2:", "not a merge"},
      {"Ġ t\n\nh e\n", ":2:", "not a merge"},
      {"#version: 0.2\nzz a\n", ":2:", "names 'zz'"},
      {"a zz\n", ":1:", "names 'zz'"},
      {"#version: 0.2\nĠ t\nb a\n", ":3:", "makes 'ba'"},
      {"#version: 0.2\nĠ t\nh e\nĠ t\n", ":4:", "listed twice (first at line 2)"},
      // Truncated files: inside a line, and inside a character.
      {"#version: 0.2\nĠ t\nh e\nĠt", ":4:", "not a merge"},
      {"#version: 0.2\nĠ t\nh e\nĠt h\xC3", ":4:", "invalid UTF-8"},
  };
  for (const auto& [content, line, what] : cases) {
    const std::string path = dir.write("merges.txt", content);
    const std::string message = load_error(vocab, path);
    EXPECT_NE(message.find(path + line), std::string::npos) << content << " -> " << message;
    EXPECT_NE(message.find(what), std::string::npos) << content << " -> " << message;
  }
  EXPECT_NE(load_error(vocab, dir.file("absent.txt")).find(dir.file("absent.txt")),
            std::string::npos);
}

}  // namespace
}  // namespace heed::data
