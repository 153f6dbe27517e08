#include "data/gpt2_ascii_split.h"

#include <gtest/gtest.h>

#include <random>

#include "data/byte_level_bpe.h"

namespace heed::data {
namespace {

// The reference: ICU's regex engine running GPT-2's pattern, as ByteLevelBpe cuts text.
const ByteLevelBpe& icu() {
  static const ByteLevelBpe bpe =
      ByteLevelBpe::load(std::string(HEED_DATA_TEST_DIR) + "/gpt2/vocab.json",
                         std::string(HEED_DATA_TEST_DIR) + "/gpt2/merges.txt");
  return bpe;
}

void expect_as_icu(const std::string& text) {
  std::vector<std::string_view> words;
  ASSERT_TRUE(split_gpt2_ascii(text, words));
  EXPECT_EQ(std::vector<std::string>(words.begin(), words.end()), icu().pre_tokenize(text))
      << "text: " << ::testing::PrintToString(text);
}

// Every string of up to 4 characters drawn from: each kind of white space the pattern treats
// apart (' ' may lead a word, the others not), the letters of every contraction, a capital, a
// digit and a punctuation mark.
TEST(Gpt2AsciiSplit, CutsEveryShortStringAsIcu) {
  const std::string chars = " \t\n'srevlmdA7!";
  std::vector<std::string> texts{""};
  for (int length = 1; length <= 4; ++length) {
    std::vector<std::string> longer;
    for (const std::string& t : texts)
      for (char c : chars) longer.push_back(t + c);
    for (const std::string& t : longer) expect_as_icu(t);
    texts = std::move(longer);
  }
}

// Each of the 128 characters in the places where its class decides the cut.
TEST(Gpt2AsciiSplit, CutsEveryAsciiCharacterAsIcu) {
  for (int i = 0; i < 128; ++i) {
    const std::string c(1, static_cast<char>(i));
    for (const std::string& text :
         {c, c + c, " " + c, "a" + c + "b", "1" + c + "2", " " + c + c + "x", "  " + c, c + "  x",
          "\t" + c + "!", "'" + c, c + "'s", "x " + c})
      expect_as_icu(text);
  }
}

TEST(Gpt2AsciiSplit, CutsRandomTextAsIcu) {
  std::mt19937 rng(7);
  const std::string common = "     \t\n\r'aeiostrlmdvAB19!.,-";
  for (int n = 0; n < 3000; ++n) {
    std::string text(rng() % 60 + 1, ' ');
    for (char& c : text)
      c = rng() % 4 == 0 ? static_cast<char>(rng() % 128) : common[rng() % common.size()];
    expect_as_icu(text);
  }
}

TEST(Gpt2AsciiSplit, LeavesOtherTextToIcu) {
  std::vector<std::string_view> words{"kept"};
  EXPECT_FALSE(split_gpt2_ascii("caf\xC3\xA9 au lait", words));
  EXPECT_FALSE(split_gpt2_ascii("bad \xFF byte", words));
  EXPECT_EQ(words, std::vector<std::string_view>{"kept"});
  EXPECT_TRUE(split_gpt2_ascii("", words));
  EXPECT_EQ(words.size(), 1u);
}

}  // namespace
}  // namespace heed::data
