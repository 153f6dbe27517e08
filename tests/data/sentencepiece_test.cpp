#include "data/sentencepiece_tokenizer.h"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "base/error.h"
#include "tests/data/test_util.h"

namespace heed::data {
namespace {

using testing::error_of;
using testing::ScratchDir;

std::string spm_path(const std::string& name) {
  return std::string(HEED_DATA_TEST_DIR) + "/spm/" + name;
}

// Written by scripts/make_spm_fixtures.py with the Python package, which wraps the same
// library: the models, the options they were trained with, and Python's ids and decodings.
const nlohmann::json& fixture() {
  static const nlohmann::json json = [] {
    std::ifstream in(spm_path("expected_ids.json"));
    EXPECT_TRUE(in.good());
    return nlohmann::json::parse(in);
  }();
  return json;
}

// gmock's HasSubstr without gmock, which the test suites do not link.
::testing::AssertionResult contains(const std::string& message, const std::string& part) {
  if (message.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << message << "' lacks '" << part << "'";
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// The options scripts/make_spm_fixtures.py trained the committed models with.
SentencePieceTrainOptions fixture_options(const std::string& model_type,
                                          const std::string& prefix) {
  const nlohmann::json& o = fixture()["train_options"];
  SentencePieceTrainOptions options;
  options.input =
      std::string(HEED_DATA_TEST_DIR) + "/../../" + fixture()["corpus"].get<std::string>();
  options.model_prefix = prefix;
  options.model_type = model_type;
  options.vocab_size = o["vocab_size"];
  options.character_coverage = o["character_coverage"];
  options.user_defined_symbols = {o["user_defined_symbols"].get<std::string>()};
  options.pad_id = o["pad_id"];
  options.unk_id = o["unk_id"];
  options.bos_id = o["bos_id"];
  options.eos_id = o["eos_id"];
  options.num_threads = o["num_threads"];
  options.seed = fixture()["seed"];
  return options;
}

// Every id and decoding of `tokenizer` equals Python's for the committed `model_type` model.
void expect_matches_python(const SentencePieceTokenizer& tokenizer, const std::string& model_type) {
  ASSERT_GE(fixture()["cases"].size(), 20u);
  for (const auto& c : fixture()["cases"]) {
    SCOPED_TRACE(model_type + " / " + c["name"].get<std::string>());
    const auto ids = tokenizer.encode(c["text"].get<std::string>());
    EXPECT_EQ(ids, c["ids"][model_type].get<std::vector<int32_t>>());
    EXPECT_EQ(tokenizer.decode(ids), c["decoded"][model_type].get<std::string>());
  }
}

class SentencePieceModel : public ::testing::TestWithParam<std::string> {
 protected:
  const nlohmann::json& model() const { return fixture()["models"][GetParam()]; }
  SentencePieceTokenizer load() const {
    return SentencePieceTokenizer::load(spm_path(model()["file"]));
  }
};

TEST_P(SentencePieceModel, IdsAndDecodingsMatchPython) {
  expect_matches_python(load(), GetParam());
}

TEST_P(SentencePieceModel, VocabularyAndSpecialIdsAreTheModels) {
  const SentencePieceTokenizer tok = load();
  const auto pieces = model()["pieces"].get<std::vector<std::string>>();
  ASSERT_EQ(tok.vocab_size(), static_cast<int32_t>(pieces.size()));
  for (int32_t i = 0; i < tok.vocab_size(); ++i) {
    EXPECT_EQ(tok.token(i), pieces[i]) << "id " << i;
    EXPECT_EQ(tok.id(pieces[i]), i) << pieces[i];
  }
  EXPECT_EQ(tok.pad_id(), model()["pad_id"]);
  EXPECT_EQ(tok.unk_id(), model()["unk_id"]);
  EXPECT_EQ(tok.eos_id(), model()["eos_id"]);
  EXPECT_EQ(tok.bos_id(), -1);  // trained with bos_id=-1: absent, not guessed
  EXPECT_EQ(tok.id("<sep>"), model()["sep_id"].get<int32_t>());
  EXPECT_EQ(tok.id("<unk>"), tok.unk_id());
  // The library would answer unk_id for these; heed says the piece is not there.
  EXPECT_EQ(tok.id("▁zebra"), std::nullopt);
  EXPECT_EQ(tok.id(""), std::nullopt);
}

TEST_P(SentencePieceModel, IdsOutsideTheVocabularyThrowNamingTheFile) {
  const SentencePieceTokenizer tok = load();
  const int32_t n = tok.vocab_size();
  for (int32_t bad : {-1, n, n + 1000}) {
    EXPECT_TRUE(contains(error_of([&] { tok.token(bad); }), fmt::format("token id {}", bad)));
    const std::vector<int32_t> ids{4, bad};
    const std::string message = error_of([&] { tok.decode(ids); });
    EXPECT_TRUE(contains(message, tok.source()));
    EXPECT_TRUE(contains(message, fmt::format("token id {} is outside", bad)));
  }
}

// heed's train() and Python's, same library and options: the same pieces in the same order and
// the same ids. The files differ only where the model records its own input and prefix paths.
TEST_P(SentencePieceModel, TrainingThroughHeedReproducesPythonsModel) {
  ScratchDir dir;
  SentencePieceTokenizer::train(fixture_options(GetParam(), dir.file("m")));
  const SentencePieceTokenizer trained = SentencePieceTokenizer::load(dir.file("m.model"));
  const auto pieces = model()["pieces"].get<std::vector<std::string>>();
  ASSERT_EQ(trained.vocab_size(), static_cast<int32_t>(pieces.size()));
  for (int32_t i = 0; i < trained.vocab_size(); ++i) EXPECT_EQ(trained.token(i), pieces[i]);
  expect_matches_python(trained, GetParam());
}

TEST_P(SentencePieceModel, TrainingTwiceGivesTheSameBytes) {
  ScratchDir dir;
  const auto options = fixture_options(GetParam(), dir.file("m"));
  SentencePieceTokenizer::train(options);
  const std::string first = read_bytes(dir.file("m.model"));
  SentencePieceTokenizer::train(options);
  EXPECT_FALSE(first.empty());
  EXPECT_EQ(read_bytes(dir.file("m.model")), first);
}

INSTANTIATE_TEST_SUITE_P(UnigramAndBpe, SentencePieceModel, ::testing::Values("unigram", "bpe"));

TEST(SentencePieceTokenizer, FilesThatAreNotModelsThrowNamingTheFileAndTheLibrarysReason) {
  ScratchDir dir;
  const std::string model = read_bytes(spm_path("unigram.model"));
  std::mt19937 rng(7);
  std::string random(4096, '\0');
  for (char& c : random) c = static_cast<char>(rng());
  // Found by fuzz/spm_fuzz.cpp: a piece with a NUL byte made the library abort the process.
  std::string nul_piece = model;
  const size_t piece = nul_piece.find("\xe2\x96\x81");  // the first piece spelt with "▁"
  ASSERT_NE(piece, std::string::npos);
  nul_piece[piece] = '\0';
  const std::vector<std::pair<std::string, std::string>> cases = {
      {dir.write("nul_piece.model", nul_piece), "holds a NUL byte"},
      {dir.file("missing.model"), "No such file"},
      {dir.file(""), "is a directory"},
      {dir.write("empty.model", ""), "unk is not defined"},
      {dir.write("truncated.model", model.substr(0, model.size() / 2)), "ParseFromArray"},
      {dir.write("random.model", random), "ParseFromArray"},
  };
  for (const auto& [path, reason] : cases) {
    SCOPED_TRACE(path);
    const std::string message = error_of([&] { SentencePieceTokenizer::load(path); });
    EXPECT_TRUE(contains(message, path));
    EXPECT_TRUE(contains(message, reason));
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(SentencePieceTokenizer, OptionsTheLibraryRefusesThrowNamingTheOptionAndTheReason) {
  ScratchDir dir;
  const auto good = fixture_options("unigram", dir.file("m"));
  struct Case {
    std::function<void(SentencePieceTrainOptions&)> change;
    std::vector<std::string> expected;
  };
  const std::vector<Case> cases = {
      {[](auto& o) { o.vocab_size = 5000; }, {"vocab_size=5000", "Vocabulary size too high"}},
      {[](auto& o) { o.vocab_size = 0; }, {"vocab_size=0", "vocab_size()) > (0)"}},
      {[](auto& o) { o.character_coverage = 2; }, {"character_coverage=2", "character_coverage"}},
      {[](auto& o) { o.pad_id = o.unk_id; }, {"pad_id=2", "pad_piece"}},
      {[&](auto& o) { o.input = dir.file("missing.txt"); }, {"missing.txt", "No such file"}},
      {[](auto& o) { o.model_type = "word"; }, {"model_type 'word'"}},
      {[](auto& o) { o.user_defined_symbols = {"a,b"}; }, {"user_defined_symbols", "'a,b'"}},
      {[](auto& o) { o.model_prefix = ""; }, {"model_prefix is empty"}},
  };
  for (const Case& c : cases) {
    SentencePieceTrainOptions options = good;
    c.change(options);
    const std::string message = error_of([&] { SentencePieceTokenizer::train(options); });
    SCOPED_TRACE(message);
    EXPECT_TRUE(contains(message, options.input));
    for (const std::string& part : c.expected) EXPECT_TRUE(contains(message, part));
    EXPECT_EQ(message.find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace heed::data
