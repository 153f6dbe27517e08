// train, infer and tokenize run as subprocesses on inputs a user may get wrong: each error is
// one line on stderr naming the option or file, with the program's exit code (2 for a usage
// or config error; train says 1 for an I/O error), and output lost to a full disk is an error
// rather than a success.
#include <nlohmann/json.hpp>

#include "programs/programs_fixture.h"

namespace heed {
namespace {

using namespace heed::testing;

// Output to a full disk (/dev/full fails every write with ENOSPC) is an error, not exit 0.
TEST_F(Programs, OutputLostToAFullDiskIsAnError) {
  Outcome r = run(kTrain + " --config configs/tiny/gpt_lm.yaml --print-config >/dev/full");
  EXPECT_EQ(r.code, 1);  // train's code for an I/O error
  EXPECT_EQ(r.err, "train: cannot write to standard output: No space left on device\n");
  // The same config to a working stdout: 0.
  r = run(kTrain + " --config configs/tiny/gpt_lm.yaml --print-config");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("task: clm"), std::string::npos) << r.out;

  r = run(kTokenize + " --vocab " + kVocab + " >/dev/full", "hello world\n");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "tokenize: cannot write to standard output: No space left on device\n");
  // Output larger than the stream's buffer fails on the way, and stops there.
  std::string many;
  for (int i = 0; i < 20000; ++i) many += "hello world, this is a line of text\n";
  r = run(kTokenize + " --vocab " + kVocab + " >/dev/full", many);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "tokenize: cannot write to standard output: No space left on device\n");

  r = run(kInfer + " generate --help >/dev/full");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "infer generate: cannot write to standard output: No space left on device\n");
  r = run(kTokenize + " --help >/dev/full");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "tokenize: cannot write to standard output: No space left on device\n");
}

// A directory where a file belongs is named as such, not read as an empty file.
TEST_F(Programs, ADirectoryWhereAFileBelongsIsNamed) {
  Outcome r = run(kTrain + " --config " + dir_.string());
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "train: " + dir_.string() + ": is a directory, not a YAML config file\n");
  r = run(kTokenize + " --vocab " + dir_.string(), "hello\n");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "tokenize: " + dir_.string() +
                       ": is a directory, not a vocabulary file (one token per line)\n");
}

// YAML nested past the parser's limit: a clear line with the file, not yaml-cpp's "bad file".
TEST_F(Programs, AConfigNestedTooDeeplyIsNamed) {
  const std::string config = path("deep.yaml");
  std::ofstream(config) << "task: mlm\nmodel: " << std::string(5000, '[') << std::string(5000, ']')
                        << "\n";
  const Outcome r = run(kTrain + " --config " + config);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "train: " + config + ":2: invalid YAML: nested more than 500 levels deep\n");
}

// tokenize's sizes: a negative one is refused (it read as "no limit"), and one below what the
// corpus needs names that minimum; no vocabulary file is written.
TEST_F(Programs, TokenizeRefusesVocabularySizesItCannotHonour) {
  const std::string vocab = path("vocab.txt");
  const std::string corpus = "the cat sat on the mat\nthe dog sat on the log\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--vocab-size -5", "tokenize: --vocab-size: must be at least 1, got -5\n"},
      {"--vocab-size 0", "tokenize: --vocab-size: must be at least 1, got 0\n"},
      {"--vocab-size ten", "tokenize: --vocab-size: expected an integer, got 'ten'\n"},
      {"--limit-alphabet -1", "tokenize: --limit-alphabet: must be at least 1, got -1\n"},
      {"--min-frequency -2", "tokenize: --min-frequency: must be at least 0, got -2\n"},
      // [PAD] [UNK] [CLS] [SEP] [MASK], a c d e g h l m n o s t, ##a ##e ##g ##h ##n ##o ##t
      {"--vocab-size 5",
       "tokenize: vocab_size 5 is below the minimum for this corpus, 24: its 5 special tokens "
       "and 19 alphabet pieces (each character, and its ## form where it continues a word)\n"},
  };
  for (const auto& [options, message] : cases) {
    const Outcome r = run(kTokenize + " --train-vocab " + vocab + " " + options, corpus);
    EXPECT_EQ(r.code, 2) << options;
    EXPECT_EQ(r.err, message) << options;
    EXPECT_FALSE(fs::exists(vocab)) << options;
  }
  const Outcome r = run(kTokenize + " --train-vocab " + vocab + " --vocab-size 24", corpus);
  EXPECT_EQ(r.code, 0) << r.err;
  std::ifstream in(vocab);
  size_t lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  EXPECT_EQ(lines, 24u);
}

// tokenize trains RoBERTa's byte-level BPE: its special tokens at RoBERTa's ids, a directory
// that RobertaTokenizer reads, and <s> text </s> around each line with --special.
TEST_F(Programs, TokenizeTrainsRobertasByteLevelBpe) {
  const std::string dir = path("roberta_bpe");
  const std::string corpus = "the cat sat on the mat\nthe cat sat on the log\n";
  const Outcome trained =
      run(kTokenize + " --train-vocab " + dir + " --type bpe --arch roberta --vocab-size 280 " +
              "--min-frequency 1",
          corpus);
  ASSERT_EQ(trained.code, 0) << trained.err;
  std::stringstream config;
  config << std::ifstream(dir + "/tokenizer_config.json").rdbuf();
  const nlohmann::json j = nlohmann::json::parse(config.str());
  EXPECT_EQ(j["tokenizer_class"], "RobertaTokenizer");
  EXPECT_EQ(j["mask_token"], "<mask>");
  EXPECT_EQ(j["model_max_length"], 512);
  const Outcome ids = run(kTokenize + " --tokenizer " + dir + " --special", "the cat\n");
  ASSERT_EQ(ids.code, 0) << ids.err;
  const Outcome pieces =
      run(kTokenize + " --tokenizer " + dir + " --special --tokens", "the cat\n");
  ASSERT_EQ(pieces.code, 0) << pieces.err;
  EXPECT_EQ(pieces.out, "<s> the Ġcat </s>\n");
  EXPECT_EQ(ids.out.rfind("0 ", 0), 0u) << ids.out;
  EXPECT_TRUE(ids.out.ends_with(" 2\n")) << ids.out;

  const Outcome wrong =
      run(kTokenize + " --train-vocab " + path("vocab.txt") + " --arch roberta", corpus);
  EXPECT_EQ(wrong.code, 2);
  EXPECT_EQ(wrong.err,
            "tokenize: --arch roberta: only a byte-level BPE (--type bpe) is trained for an arch; "
            "a wordpiece has its own special tokens\n");
}

}  // namespace
}  // namespace heed
