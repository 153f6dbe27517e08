#pragma once
// Tiny random checkpoints of every family (BERT and RoBERTa MLM, classifier and tagger, GPT,
// encoder-decoder), written once per suite with save_pretrained, and the `infer` program run on
// them as a subprocess: for the tests of infer's subcommands.
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
#include "data/byte_level_bpe_trainer.h"
#include "data/char_tokenizer.h"
#include "data/text_tokenizer.h"
#include "data/tokenizer_io.h"
#include "data/wordpiece.h"
#include "decode/generation.h"
#include "nn/models/bert.h"
#include "nn/models/encoder_decoder.h"
#include "nn/models/gpt.h"
#include "nn/models/roberta.h"
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

// A byte-level BPE with RoBERTa's special tokens at its ids (<s> 0, <pad> 1, </s> 2, <unk> 3,
// <mask> 4), trained on a few sentences so that their words are whole tokens ("Ġcat").
inline data::BpeTokenizer tiny_roberta_bpe() {
  std::vector<std::string> lines;
  for (const char* line : {"the cat sat on the mat .", "a dog ran , and a big red house was small",
                           "the cats sat . the dog ran on a mat of the house"}) {
    lines.push_back(std::string(line) + "\n");
    lines.push_back(std::string(line) + "\n");
  }
  const data::TrainedByteLevelBpe trained = data::train_byte_level_bpe_on_texts(
      lines, {.vocab_size = 400,
              .min_frequency = 1,
              .special_tokens = {"<s>", "<pad>", "</s>", "<unk>", "<mask>"}});
  return data::BpeTokenizer(data::ByteLevelBpe::from_parts(trained.tokens, trained.merges),
                            {.bos = "<s>",
                             .eos = "</s>",
                             .unk = "<unk>",
                             .pad = "<pad>",
                             .mask = "<mask>",
                             .cls = "<s>",
                             .sep = "</s>"},
                            data::BpeTemplate::kRoberta);
}

inline nn::RobertaConfig tiny_roberta_config(int64_t vocab, int64_t num_labels,
                                             std::vector<std::string> id2label) {
  nn::RobertaConfig c;
  c.vocab_size = vocab;
  c.hidden_size = 16;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 2;
  c.intermediate_size = 32;
  c.max_position_embeddings = kBertPositions;  // 30 tokens after <pad> = 1
  c.initializer_range = kInitStd;
  c.num_labels = num_labels;
  c.id2label = std::move(id2label);
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

    const data::BpeTokenizer bpe = tiny_roberta_bpe();
    const int64_t bpe_vocab = bpe.bpe().vocab_size();
    roberta_mlm_ =
        std::make_shared<nn::RobertaForMaskedLM>(tiny_roberta_config(bpe_vocab, 2, {}), 6);
    roberta_cls_ = std::make_shared<nn::RobertaForSequenceClassification>(
        tiny_roberta_config(bpe_vocab, 3, {"negative", "neutral", "positive"}), 7);
    roberta_tagger_ = std::make_shared<nn::RobertaForTokenClassification>(
        tiny_roberta_config(bpe_vocab, 4, {"DET", "NOUN", "VERB", "ADP"}), 8);
    for (auto [name, model] : std::vector<std::pair<std::string, nn::PretrainedModel*>>{
             {"roberta_mlm", roberta_mlm_.get()},
             {"roberta_cls", roberta_cls_.get()},
             {"roberta_tagger", roberta_tagger_.get()}}) {
      model->eval();
      nn::save_pretrained(*model, path(name));
      bpe.save(path(name), kBertPositions - 2);
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
  static inline std::shared_ptr<nn::RobertaForMaskedLM> roberta_mlm_;
  static inline std::shared_ptr<nn::RobertaForSequenceClassification> roberta_cls_;
  static inline std::shared_ptr<nn::RobertaForTokenClassification> roberta_tagger_;
};

}  // namespace heed::train
