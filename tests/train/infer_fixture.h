#pragma once
// Tiny random checkpoints of every family (BERT MLM, classifier and tagger, GPT, encoder-decoder),
// written once per suite with save_pretrained, and the `infer` program run on them as a
// subprocess: for the tests of infer's subcommands.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "data/char_tokenizer.h"
#include "data/text_tokenizer.h"
#include "data/tokenizer_io.h"
#include "data/wordpiece.h"
#include "decode/generation.h"
#include "nn/models/bert.h"
#include "nn/models/encoder_decoder.h"
#include "nn/models/gpt.h"
#include "nn/pretrained_io.h"

namespace heed::train {

namespace fs = std::filesystem;
using nlohmann::json;

// Wider than the usual 0.02, so that argmaxes win by clear margins.
constexpr double kInitStd = 0.5;
constexpr int64_t kBertPositions = 32;
constexpr int64_t kGptPositions = 16;

inline data::WordPieceTokenizer tiny_wordpiece() {
  return data::WordPieceTokenizer(
      data::Vocab({"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "dog",   "sat",
                   "on",    "mat",   "a",     "house", "of",     "ran", "big", "small", "red",
                   "and",   "is",    "was",   ".",     ",",      "##s", "##ed"}));
}

inline nn::BertConfig tiny_bert_config(int64_t vocab) {
  nn::BertConfig c;
  c.vocab_size = vocab;
  c.hidden_size = 16;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 2;
  c.intermediate_size = 32;
  c.max_position_embeddings = kBertPositions;
  c.initializer_range = kInitStd;
  return c;
}

struct Outcome {
  int code = -1;
  std::string out, err;
};

inline std::string quote(const std::string& s) {
  std::string q = "'";
  for (char ch : s) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

// Tiny checkpoints of every family, written once for the suite; the models stay in memory.
class Infer : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("heed_infer_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    const data::WordPieceTokenizer tok = tiny_wordpiece();
    const int64_t V = tok.vocab_size();

    mlm_ = std::make_shared<nn::BertForMaskedLM>(tiny_bert_config(V), 1);
    nn::BertConfig cls_config = tiny_bert_config(V);
    cls_config.num_labels = 3;
    cls_config.id2label = {"negative", "neutral", "positive"};
    cls_ = std::make_shared<nn::BertForSequenceClassification>(cls_config, 2);
    nn::BertConfig tag_config = tiny_bert_config(V);
    tag_config.num_labels = 4;
    tag_config.id2label = {"DET", "NOUN", "VERB", "ADP"};
    tagger_ = std::make_shared<nn::BertForTokenClassification>(tag_config, 3);

    nn::GPT2Config g;
    g.vocab_size = V;
    g.n_positions = kGptPositions;
    g.n_embd = 16;
    g.n_layer = 2;
    g.n_head = 2;
    g.initializer_range = kInitStd;
    g.bos_token_id = g.eos_token_id = *tok.vocab().find("[SEP]");  // the document separator
    gpt_ = std::make_shared<nn::GPT>(g, 4);

    const data::CharTokenizer chars =
        data::CharTokenizer::build({"abcdefghij klmnop"}, data::CharTokenizer::Unit::kCharacter);
    nn::BartConfig b;
    b.vocab_size = chars.vocab_size();
    b.max_position_embeddings = 24;
    b.d_model = 16;
    b.encoder_layers = b.decoder_layers = 2;
    b.encoder_attention_heads = b.decoder_attention_heads = 2;
    b.encoder_ffn_dim = b.decoder_ffn_dim = 32;
    b.init_std = kInitStd;
    b.pad_token_id = chars.pad_id();
    b.bos_token_id = b.decoder_start_token_id = chars.bos_id();
    b.eos_token_id = chars.eos_id();
    bart_ = std::make_shared<nn::EncoderDecoder>(b, 5);

    for (auto [name, model] :
         std::vector<std::pair<std::string, nn::PretrainedModel*>>{{"mlm", mlm_.get()},
                                                                   {"cls", cls_.get()},
                                                                   {"tagger", tagger_.get()},
                                                                   {"gpt", gpt_.get()},
                                                                   {"bart", bart_.get()}}) {
      model->eval();
      nn::save_pretrained(*model, path(name));
      if (name == "bart") {
        data::save_char_tokenizer(chars, path(name));
      } else {
        data::save_wordpiece(tok, path(name), name == "gpt" ? kGptPositions : kBertPositions);
      }
    }
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  static std::string path(const std::string& name) { return (dir_ / name).string(); }

  // Runs `infer ARGS` (already quoted where needed) with `input` on stdin.
  static Outcome infer(const std::string& args, const std::string& input = "") {
    const fs::path in = dir_ / "stdin.txt", err = dir_ / "stderr.txt";
    std::ofstream(in) << input;
    // One thread: the models are tiny, and OpenMP threads spinning in two processes at once
    // on two shared cores cost far more than they give.
    const std::string command = "OMP_NUM_THREADS=1 " + std::string(HEED_INFER_BIN) + " " + args +
                                " <" + in.string() + " 2>" + err.string();
    Outcome r;
    FILE* pipe = popen(command.c_str(), "r");
    if (pipe == nullptr) return r;
    char buffer[4096];
    size_t n;
    while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) r.out.append(buffer, n);
    const int status = pclose(pipe);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::stringstream e;
    e << std::ifstream(err).rdbuf();
    r.err = e.str();
    return r;
  }

  static std::vector<json> json_lines(const std::string& out) {
    std::vector<json> lines;
    std::istringstream in(out);
    std::string line;
    while (std::getline(in, line)) lines.push_back(json::parse(line));
    return lines;
  }

  static inline fs::path dir_;
  static inline std::shared_ptr<nn::BertForMaskedLM> mlm_;
  static inline std::shared_ptr<nn::BertForSequenceClassification> cls_;
  static inline std::shared_ptr<nn::BertForTokenClassification> tagger_;
  static inline std::shared_ptr<nn::GPT> gpt_;
  static inline std::shared_ptr<nn::EncoderDecoder> bart_;
};

}  // namespace heed::train
