// The run config: loading, defaults, every validation error's exact one-line message (file,
// line, dotted key), --set overrides, and the to_yaml round trip.
#include "train/config/config.h"
#include "train/config/pipeline.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "nn/activation.h"
#include "train/config/config_schema.h"
#include "train/config/did_you_mean.h"
#include "train/tasks/load_run_config.h"

namespace heed::train {
namespace {

namespace fs = std::filesystem;

// A per-test directory holding the data files a config names, and the configs themselves.
class Config : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           (std::string("heed_config_") + info->name() + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "ckpt");
    for (const char* name : {"train.txt", "valid.txt", "test.txt", "vocab.txt"}) {
      std::ofstream(dir_ / name) << "hello world\n";
    }
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string dir() const { return dir_.string(); }

  // Writes `text` (with {DIR} replaced by the scratch directory) and returns its path.
  std::string write(const std::string& text, const std::string& name = "run.yaml") const {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << replace_all(text, "{DIR}", dir());
    return path;
  }

  static std::string replace_all(std::string text, const std::string& from, const std::string& to) {
    for (size_t at = text.find(from); at != std::string::npos;
         at = text.find(from, at + to.size())) {
      text.replace(at, from.size(), to);
    }
    return text;
  }

  // The base config with `from` (which must occur) replaced by `to`.
  static std::string base_with(const std::string& from, const std::string& to) {
    std::string text = kBase;
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
    return text;
  }

  // The message load_run_config throws, or "" when it loads.
  std::string error_of(const std::string& path, const std::vector<std::string>& overrides = {}) {
    try {
      load_run_config(path, overrides);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "";
  }
  // Writes `text` and returns "<line>: <rest>" of its error, the path prefix stripped.
  std::string error_in(const std::string& text, const std::vector<std::string>& overrides = {}) {
    const std::string path = write(text);
    const std::string message = error_of(path, overrides);
    if (message.rfind(path + ":", 0) != 0) return "(not in the file) " + message;
    return message.substr(path.size() + 1);
  }

  // Line numbers matter: the error tests name them.
  static constexpr const char* kBase =
      "task: mlm\n"                      // 1
      "model:\n"                         // 2
      "  arch: bert\n"                   // 3
      "  hidden_size: 64\n"              // 4
      "  num_hidden_layers: 2\n"         // 5
      "  num_attention_heads: 4\n"       // 6
      "  intermediate_size: 128\n"       // 7
      "  max_position_embeddings: 64\n"  // 8
      "tokenizer:\n"                     // 9
      "  type: wordpiece\n"              // 10
      "  vocab: {DIR}/vocab.txt\n"       // 11
      "  lowercase: true\n"              // 12
      "data:\n"                          // 13
      "  train: {DIR}/train.txt\n"       // 14
      "  valid: {DIR}/valid.txt\n"       // 15
      "  max_seq_length: 64\n"           // 16
      "optim:\n"                         // 17
      "  lr: 5.0e-4\n"                   // 18
      "  betas: [0.9, 0.98]\n"           // 19
      "schedule:\n"                      // 20
      "  name: cosine\n"                 // 21
      "  warmup_steps: 10\n"             // 22
      "train:\n"                         // 23
      "  batch_size: 8\n"                // 24
      "  max_steps: 100\n"               // 25
      "  output_dir: {DIR}/run\n"        // 26
      "eval:\n"                          // 27
      "  every_steps: 50\n"              // 28
      "checkpoint: {keep_last: 2}\n";    // 29

  fs::path dir_;
};

TEST_F(Config, LoadsTheContractExample) {
  const RunConfig c = load_run_config(write(R"(
task: mlm
model: {arch: bert, hidden_size: 256, num_hidden_layers: 4, num_attention_heads: 4,
        intermediate_size: 1024, hidden_act: gelu, max_position_embeddings: 128,
        hidden_dropout_prob: 0.1, attention_probs_dropout_prob: 0.1}
init_from: {DIR}/ckpt
tokenizer: {type: wordpiece, vocab: {DIR}/vocab.txt, vocab_size: 8192, lowercase: true}
data: {train: {DIR}/train.txt, valid: {DIR}/valid.txt, test: {DIR}/test.txt,
       max_seq_length: 128, mlm_probability: 0.15}
optim: {name: adamw, lr: 5.0e-4, betas: [0.9, 0.999], eps: 1.0e-8, weight_decay: 0.01}
schedule: {name: linear, warmup_steps: 200}
train: {batch_size: 32, grad_accum_steps: 1, max_steps: 3000, max_grad_norm: 1.0,
        seed: 42, threads: 2, output_dir: runs/bert_mlm}
eval: {every_steps: 250, max_batches: 50}
checkpoint: {every_steps: 500, keep_last: 3}
logging: {every_steps: 10}
)"));
  EXPECT_EQ(c.task.name, "mlm");
  EXPECT_EQ(c.model.arch(), Arch::kBert);
  const nn::BertConfig& bert = c.model.as<nn::BertConfig>();
  EXPECT_EQ(bert.hidden_size, 256);
  EXPECT_EQ(bert.num_hidden_layers, 4);
  EXPECT_EQ(bert.num_attention_heads, 4);
  EXPECT_EQ(bert.intermediate_size, 1024);
  EXPECT_EQ(bert.hidden_act, "gelu");
  EXPECT_EQ(bert.max_position_embeddings, 128);
  EXPECT_DOUBLE_EQ(bert.hidden_dropout_prob, 0.1);
  EXPECT_DOUBLE_EQ(bert.attention_probs_dropout_prob, 0.1);
  EXPECT_EQ(c.init_from, dir() + "/ckpt");
  EXPECT_EQ(c.tokenizer.type, TokenizerType::kWordPiece);
  EXPECT_EQ(c.tokenizer.vocab, dir() + "/vocab.txt");
  EXPECT_EQ(c.tokenizer.vocab_size, 8192);
  EXPECT_TRUE(c.tokenizer.lowercase);
  EXPECT_EQ(c.data.train, dir() + "/train.txt");
  EXPECT_EQ(c.data.valid, dir() + "/valid.txt");
  EXPECT_EQ(c.data.test, dir() + "/test.txt");
  EXPECT_EQ(c.data.max_seq_length, 128);
  EXPECT_DOUBLE_EQ(c.data.mlm_probability, 0.15);
  EXPECT_EQ(c.optim.name, OptimizerName::kAdamW);
  EXPECT_DOUBLE_EQ(c.optim.lr, 5e-4);
  EXPECT_DOUBLE_EQ(c.optim.betas[0], 0.9);
  EXPECT_DOUBLE_EQ(c.optim.betas[1], 0.999);
  EXPECT_DOUBLE_EQ(c.optim.eps, 1e-8);
  EXPECT_DOUBLE_EQ(c.optim.weight_decay, 0.01);
  EXPECT_EQ(c.schedule.name, ScheduleName::kLinear);
  EXPECT_EQ(c.schedule.warmup_steps, 200);
  EXPECT_EQ(c.train.batch_size, 32);
  EXPECT_EQ(c.train.grad_accum_steps, 1);
  EXPECT_EQ(c.train.max_steps, 3000);
  EXPECT_DOUBLE_EQ(c.train.max_grad_norm, 1.0);
  EXPECT_EQ(c.train.seed, 42);
  EXPECT_EQ(c.train.threads, 2);
  EXPECT_EQ(c.train.output_dir, "runs/bert_mlm");
  EXPECT_EQ(c.eval.every_steps, 250);
  EXPECT_EQ(c.eval.max_batches, 50);
  EXPECT_EQ(c.checkpoint.every_steps, 500);
  EXPECT_EQ(c.checkpoint.keep_last, 3);
  EXPECT_EQ(c.logging.every_steps, 10);
}

TEST_F(Config, DefaultsFillIn) {
  const RunConfig c = load_run_config(write(R"(
task: mlm
model: {arch: bert}
tokenizer: {vocab_size: 1000}
data: {train: {DIR}/train.txt}
train: {max_steps: 10, output_dir: out}
)"));
  // The model: Hugging Face's BertConfig defaults; tokenizer-derived values unset.
  const nn::BertConfig hf;
  const nn::BertConfig& bert = c.model.as<nn::BertConfig>();
  EXPECT_EQ(bert.hidden_size, hf.hidden_size);
  EXPECT_EQ(bert.num_hidden_layers, hf.num_hidden_layers);
  EXPECT_EQ(bert.hidden_act, "gelu");
  EXPECT_DOUBLE_EQ(bert.layer_norm_eps, 1e-12);
  EXPECT_EQ(bert.position_embedding_type, "absolute");
  EXPECT_FALSE(bert.classifier_dropout);
  EXPECT_FALSE(c.model.vocab_size);
  EXPECT_FALSE(c.model.pad_token_id);
  EXPECT_FALSE(c.model.num_labels);
  EXPECT_FALSE(c.init_from);
  EXPECT_EQ(c.tokenizer.type, TokenizerType::kWordPiece);
  EXPECT_FALSE(c.tokenizer.vocab);
  EXPECT_TRUE(c.tokenizer.lowercase);
  EXPECT_FALSE(c.tokenizer.strip_accents);
  EXPECT_EQ(c.tokenizer.min_frequency, 2);
  EXPECT_FALSE(c.data.valid);
  EXPECT_FALSE(c.data.test);
  EXPECT_EQ(c.data.max_seq_length, 128);
  EXPECT_DOUBLE_EQ(c.data.mlm_probability, 0.15);
  EXPECT_DOUBLE_EQ(c.data.mask_replace_prob, 0.8);
  EXPECT_DOUBLE_EQ(c.data.random_replace_prob, 0.1);
  EXPECT_FALSE(c.data.labels);
  EXPECT_TRUE(c.data.shuffle);
  EXPECT_EQ(c.data.prefetch, 1);
  EXPECT_EQ(c.optim.name, OptimizerName::kAdamW);
  EXPECT_DOUBLE_EQ(c.optim.lr, 5e-5);
  EXPECT_DOUBLE_EQ(c.optim.betas[0], 0.9);
  EXPECT_DOUBLE_EQ(c.optim.betas[1], 0.999);
  EXPECT_DOUBLE_EQ(c.optim.eps, 1e-8);
  EXPECT_DOUBLE_EQ(c.optim.weight_decay, 0.0);
  EXPECT_EQ(c.schedule.name, ScheduleName::kLinear);
  EXPECT_EQ(c.schedule.warmup_steps, 0);
  EXPECT_EQ(c.train.batch_size, 32);
  EXPECT_EQ(c.train.grad_accum_steps, 1);
  EXPECT_DOUBLE_EQ(c.train.max_grad_norm, 1.0);
  EXPECT_EQ(c.train.seed, 42);
  EXPECT_EQ(c.train.threads, 0);
  EXPECT_EQ(c.train.resume, Resume::kNever);
  EXPECT_TRUE(c.train.eval_at_end);
  EXPECT_EQ(c.train.dtype, DType::f32);
  EXPECT_EQ(c.eval.every_steps, 0);
  EXPECT_EQ(c.eval.max_batches, 0);
  EXPECT_FALSE(c.eval.batch_size);
  EXPECT_EQ(c.checkpoint.every_steps, 500);
  EXPECT_EQ(c.checkpoint.keep_last, 3);
  EXPECT_EQ(c.logging.every_steps, 10);
  EXPECT_EQ(c.logging.progress, Progress::kAuto);
  EXPECT_EQ(c.generation.num_beams, 1);
  EXPECT_EQ(c.generation.max_new_tokens, 64);
}

// The model section holds one architecture's config: the one model.arch names.
TEST(ModelConfigTest, HoldsOnlyTheConfigOfItsArchitecture) {
  ModelConfig model;
  EXPECT_EQ(model.arch(), Arch::kBert);
  model.as<nn::BertConfig>().hidden_size = 96;
  EXPECT_THROW(model.as<nn::GPT2Config>(), Error);

  model.set_arch(Arch::kBert);  // the same architecture: the config stays
  EXPECT_EQ(model.as<nn::BertConfig>().hidden_size, 96);

  model.set_arch(Arch::kBart);  // another: its config at its defaults
  EXPECT_EQ(model.arch(), Arch::kBart);
  EXPECT_EQ(model.as<nn::BartConfig>().d_model, nn::BartConfig{}.d_model);
  EXPECT_THROW(model.as<nn::BertConfig>(), Error);
  model.set_arch(Arch::kBert);
  EXPECT_EQ(model.as<nn::BertConfig>().hidden_size, nn::BertConfig{}.hidden_size);
}

TEST_F(Config, FillsEachArchitecturesHuggingFaceConfig) {
  const RunConfig gpt = load_run_config(write(R"(
task: clm
model: {arch: gpt2, n_embd: 96, n_layer: 3, n_head: 6, n_positions: 256, n_inner: 200,
        activation_function: gelu_new, resid_pdrop: 0.0, embd_pdrop: 0.05, attn_pdrop: 0.2,
        vocab_size: 500, bos_token_id: 1, eos_token_id: 2}
tokenizer: {type: char, unit: whitespace}
data: {train: {DIR}/train.txt, max_seq_length: 256}
train: {max_steps: 10, output_dir: out, dtype: bf16, resume: auto}
)"));
  EXPECT_EQ(gpt.model.arch(), Arch::kGpt2);
  const nn::GPT2Config& gpt2 = gpt.model.as<nn::GPT2Config>();
  EXPECT_EQ(gpt2.n_embd, 96);
  EXPECT_EQ(gpt2.n_layer, 3);
  EXPECT_EQ(gpt2.n_head, 6);
  EXPECT_EQ(gpt2.n_positions, 256);
  EXPECT_EQ(gpt2.n_inner, 200);
  EXPECT_DOUBLE_EQ(gpt2.resid_pdrop, 0.0);
  EXPECT_DOUBLE_EQ(gpt2.embd_pdrop, 0.05);
  EXPECT_DOUBLE_EQ(gpt2.attn_pdrop, 0.2);
  EXPECT_EQ(gpt.model.vocab_size, 500);
  EXPECT_EQ(gpt.model.bos_token_id, 1);
  EXPECT_EQ(gpt.model.eos_token_id, 2);
  EXPECT_EQ(gpt.tokenizer.type, TokenizerType::kChar);
  EXPECT_EQ(gpt.tokenizer.unit, data::CharTokenizer::Unit::kWhitespaceSymbol);
  EXPECT_EQ(gpt.train.dtype, DType::bf16);
  EXPECT_EQ(gpt.train.resume, Resume::kAuto);

  const RunConfig bart = load_run_config(write(R"(
task: seq2seq
model: {arch: bart, d_model: 64, encoder_layers: 2, decoder_layers: 1,
        encoder_attention_heads: 4, decoder_attention_heads: 2, encoder_ffn_dim: 128,
        decoder_ffn_dim: 96, max_position_embeddings: 64, scale_embedding: true,
        decoder_start_token_id: 3}
tokenizer: {type: char}
data: {train: {DIR}/train.txt, max_source_length: 32, max_target_length: 48}
generation: {num_beams: 4, max_new_tokens: 40}
train: {max_steps: 10, output_dir: out}
)"));
  EXPECT_EQ(bart.model.arch(), Arch::kBart);
  const nn::BartConfig& hf = bart.model.as<nn::BartConfig>();
  EXPECT_EQ(hf.d_model, 64);
  EXPECT_EQ(hf.encoder_layers, 2);
  EXPECT_EQ(hf.decoder_layers, 1);
  EXPECT_EQ(hf.encoder_attention_heads, 4);
  EXPECT_EQ(hf.decoder_attention_heads, 2);
  EXPECT_EQ(hf.encoder_ffn_dim, 128);
  EXPECT_EQ(hf.decoder_ffn_dim, 96);
  EXPECT_TRUE(hf.scale_embedding);
  EXPECT_EQ(bart.model.decoder_start_token_id, 3);
  EXPECT_FALSE(bart.model.pad_token_id);
  EXPECT_EQ(bart.data.max_source_length, 32);
  EXPECT_EQ(bart.data.max_target_length, 48);
  EXPECT_EQ(bart.generation.num_beams, 4);
  EXPECT_EQ(bart.generation.max_new_tokens, 40);

  const RunConfig classify = load_run_config(write(R"(
task: classification
model: {arch: bert, hidden_size: 64, num_attention_heads: 2, classifier_dropout: 0.2,
        num_labels: 2}
init_from: {DIR}/ckpt
data: {train: {DIR}/train.txt, labels: [ham, spam]}
train: {max_steps: 10, output_dir: out}
)"));
  EXPECT_EQ(classify.task.name, "classification");
  EXPECT_EQ(classify.model.as<nn::BertConfig>().classifier_dropout, 0.2);
  EXPECT_EQ(classify.model.num_labels, 2);
  EXPECT_EQ(classify.data.labels, (std::vector<std::string>{"ham", "spam"}));
  EXPECT_FALSE(classify.tokenizer.vocab);  // the checkpoint's vocab.txt
}

TEST_F(Config, UnknownKeysSayWhereAndSuggest) {
  EXPECT_EQ(error_in(base_with("  lr: 5.0e-4", "  learning_rate: 5.0e-4")),
            "18: unknown key 'optim.learning_rate' (did you mean 'optim.lr'?)");
  EXPECT_EQ(error_in(base_with("  train: {DIR}", "  trian: {DIR}")),
            "14: unknown key 'data.trian' (did you mean 'data.train'?)");
  EXPECT_EQ(error_in(base_with("  batch_size: 8", "  batch_sise: 8")),
            "24: unknown key 'train.batch_sise' (did you mean 'train.batch_size'?)");
  EXPECT_EQ(error_in(base_with("optim:", "optimizer:")),
            "17: unknown key 'optimizer' (did you mean 'optim'?)");
  EXPECT_EQ(error_in(base_with("  warmup_steps: 10", "  warmup: 10")),
            "22: unknown key 'schedule.warmup' (did you mean 'schedule.warmup_steps'?)");
  // In the wrong section: the one section that has it.
  EXPECT_EQ(error_in(base_with("  batch_size: 8", "  weight_decay: 8")),
            "24: unknown key 'train.weight_decay' (did you mean 'optim.weight_decay'?)");
  // Another architecture's key.
  EXPECT_EQ(error_in(base_with("  hidden_size: 64", "  n_embd: 64")),
            "4: unknown key 'model.n_embd' (a gpt2 key, but model.arch is bert)");
  EXPECT_EQ(error_in(base_with("checkpoint: {keep_last: 2}", "checkpoint: {colour: blue}")),
            "29: unknown key 'checkpoint.colour'");
  EXPECT_EQ(error_in(std::string(kBase) + "extras: 1\n"), "30: unknown key 'extras'");
}

TEST_F(Config, WrongTypesNameTheLine) {
  EXPECT_EQ(error_in(base_with("  batch_size: 8", "  batch_size: \"abc\"")),
            "24: train.batch_size: expected an integer, got 'abc'");
  EXPECT_EQ(error_in(base_with("  batch_size: 8", "  batch_size: 8.5")),
            "24: train.batch_size: expected an integer, got '8.5'");
  // Quoted, a number is a string.
  EXPECT_EQ(error_in(base_with("  batch_size: 8", "  batch_size: \"8\"")),
            "24: train.batch_size: expected an integer, got '8'");
  EXPECT_EQ(error_in(base_with("  lr: 5.0e-4", "  lr: fast")),
            "18: optim.lr: expected a finite number, got 'fast'");
  EXPECT_EQ(error_in(base_with("  lr: 5.0e-4", "  lr: .nan")),
            "18: optim.lr: expected a finite number, got '.nan'");
  EXPECT_EQ(error_in(base_with("  lowercase: true", "  lowercase: yes")),
            "12: tokenizer.lowercase: expected true or false, got 'yes'");
  EXPECT_EQ(error_in(base_with("  betas: [0.9, 0.98]", "  betas: 0.9")),
            "19: optim.betas: expected a list of 2 numbers, got '0.9'");
  EXPECT_EQ(error_in(base_with("  betas: [0.9, 0.98]", "  betas: [0.9, 0.98, 0.5]")),
            "19: optim.betas: expected a list of 2 numbers, got a list");
  EXPECT_EQ(error_in(base_with("  output_dir: {DIR}/run", "  output_dir: [a, b]")),
            "26: train.output_dir: expected a string, got a list");
  EXPECT_EQ(error_in(base_with("checkpoint: {keep_last: 2}", "checkpoint: 3")),
            "29: checkpoint: expected a mapping of keys, got '3'");
  EXPECT_EQ(error_in(base_with("  max_steps: 100", "  max_steps:")),
            "25: train.max_steps: expected an integer, got null");
}

TEST_F(Config, MissingRequiredKeys) {
  EXPECT_EQ(error_in(base_with("task: mlm\n", "")), "1: missing required key 'task'");
  EXPECT_EQ(error_in(base_with("  train: {DIR}/train.txt\n", "")),
            "13: missing required key 'data.train'");
  EXPECT_EQ(error_in(base_with("  output_dir: {DIR}/run\n", "")),
            "23: missing required key 'train.output_dir'");
  EXPECT_EQ(error_in(base_with("  max_steps: 100\n", "")),
            "23: missing required key 'train.max_steps'");
  EXPECT_EQ(error_in(base_with("  arch: bert\n", "")), "2: missing required key 'model.arch'");
  // No section at all: line 1.
  EXPECT_EQ(error_in(base_with("data:\n  train: {DIR}/train.txt\n  valid: {DIR}/valid.txt\n"
                               "  max_seq_length: 64\n",
                               "")),
            "1: missing required key 'data.train'");
  EXPECT_EQ(error_in(""), "1: missing required key 'task'");
  EXPECT_EQ(
      error_in(base_with("  vocab: {DIR}/vocab.txt\n", "")),
      "9: tokenizer.vocab: missing: give the tokenizer's files, tokenizer.vocab_size to train "
      "one, or init_from");
}

TEST_F(Config, ImpossibleValues) {
  const std::vector<std::pair<std::pair<std::string, std::string>, std::string>> cases = {
      {{"  num_attention_heads: 4", "  num_attention_heads: 5"},
       "6: model.num_attention_heads: 5 does not divide model.hidden_size 64"},
      {{"  lr: 5.0e-4", "  lr: 0"}, "18: optim.lr: must be > 0, got 0"},
      {{"  max_seq_length: 64", "  max_seq_length: 64\n  truncation: head_tail"},
       "17: data.truncation: applies to task classification only (a tagged sentence or an LM "
       "window is cut at its end)"},
      {{"  max_seq_length: 64", "  max_seq_length: 64\n  shuffle: false\n  group_by_length: true"},
       "18: data.group_by_length: needs data.shuffle (it groups the shuffled order)"},
      {{"  max_seq_length: 64", "  max_seq_length: 64\n  max_train_samples: 0"},
       "17: data.max_train_samples: must be at least 1, got 0"},
      {{"  lr: 5.0e-4", "  lr: -1e-3"}, "18: optim.lr: must be > 0, got -0.001"},
      {{"  lr: 5.0e-4", "  lr: 5.0e-4\n  name: adafactor\n  decay_rate: 0.8"},
       "20: optim.decay_rate: must be < 0 (the second moment's decay 1 - t^decay_rate rises to "
       "1), got 0.8"},
      {{"  lr: 5.0e-4", "  lr: 5.0e-4\n  name: adafactor\n  beta1: 1.0"},
       "20: optim.beta1: must be in [0, 1), got 1"},
      {{"  lr: 5.0e-4", "  lr: 5.0e-4\n  clip_threshold: 0"},
       "19: optim.clip_threshold: must be > 0, got 0"},
      {{"  lr: 5.0e-4", "  lr: 5.0e-4\n  adafactor_eps: [-1.0e-30, 1.0e-3]"},
       "19: optim.adafactor_eps: each must be >= 0, got [-1e-30, 0.001]"},
      {{"  hidden_size: 64", "  hidden_size: 64\n  hidden_dropout_prob: 1.0"},
       "5: model.hidden_dropout_prob: must be in [0, 1), got 1"},
      {{"  hidden_size: 64", "  hidden_size: 64\n  attention_probs_dropout_prob: -0.1"},
       "5: model.attention_probs_dropout_prob: must be in [0, 1), got -0.1"},
      {{"  batch_size: 8", "  batch_size: 0"}, "24: train.batch_size: must be at least 1, got 0"},
      {{"  batch_size: 8", "  grad_accum_steps: 0"},
       "24: train.grad_accum_steps: must be at least 1, got 0"},
      {{"  max_steps: 100", "  max_steps: 0"}, "25: train.max_steps: must be at least 1, got 0"},
      {{"  max_steps: 100", "  max_steps: 100\n  label_smoothing: 1.0"},
       "26: train.label_smoothing: must be in [0, 1), got 1"},
      {{"  warmup_steps: 10", "  warmup_steps: -1"},
       "22: schedule.warmup_steps: must be in [0, train.max_steps = 100], got -1"},
      {{"  warmup_steps: 10", "  warmup_steps: 101"},
       "22: schedule.warmup_steps: must be in [0, train.max_steps = 100], got 101"},
      {{"  betas: [0.9, 0.98]", "  betas: [0.9, 1.0]"},
       "19: optim.betas: each must be in [0, 1), got [0.9, 1]"},
      {{"  betas: [0.9, 0.98]", "  eps: 0.0"}, "19: optim.eps: must be > 0, got 0"},
      {{"checkpoint: {keep_last: 2}", "checkpoint: {keep_last: 0}"},
       "29: checkpoint.keep_last: must be at least 1, got 0"},
      {{"  max_seq_length: 64", "  max_seq_length: 65"},
       "16: data.max_seq_length: 65 exceeds model.max_position_embeddings 64"},
      {{"  every_steps: 50", "  every_steps: -5"},
       "28: eval.every_steps: must be at least 0, got -5"},
      {{"  valid: {DIR}/valid.txt\n", ""},
       "27: eval.every_steps: evaluating every 50 steps needs data.valid"},
  };
  for (const auto& [edit, message] : cases) {
    EXPECT_EQ(error_in(base_with(edit.first, edit.second)), message) << edit.second;
  }
  // Heads must divide the width in every architecture.
  EXPECT_EQ(error_in(R"(task: clm
model: {arch: gpt2, n_embd: 64, n_head: 3}
tokenizer: {type: char}
data: {train: {DIR}/train.txt}
train: {max_steps: 10, output_dir: out}
)"),
            "2: model.n_head: 3 does not divide model.n_embd 64");
  EXPECT_EQ(error_in(R"(task: seq2seq
model: {arch: bart, d_model: 64, encoder_attention_heads: 4, decoder_attention_heads: 6}
tokenizer: {type: char}
data: {train: {DIR}/train.txt}
train: {max_steps: 10, output_dir: out}
)"),
            "2: model.decoder_attention_heads: 6 does not divide model.d_model 64");
  EXPECT_EQ(error_in(R"(task: seq2seq
model: {arch: bart, d_model: 64, encoder_attention_heads: 5}
tokenizer: {type: char}
data: {train: {DIR}/train.txt}
train: {max_steps: 10, output_dir: out}
)"),
            "2: model.encoder_attention_heads: 5 does not divide model.d_model 64");
  // eval.decode_metrics names what scores a seq2seq model's outputs, and only what it names
  // can judge the best model.
  const std::string seq2seq = R"(task: seq2seq
model: {arch: bart, d_model: 64, encoder_attention_heads: 4, decoder_attention_heads: 4}
tokenizer: {type: char}
data: {train: {DIR}/train.txt, valid: {DIR}/train.txt}
train: {max_steps: 10, output_dir: out}
eval: {every_steps: 5, decode_metrics: )";
  EXPECT_EQ(error_in(seq2seq + "[bleu, wer]}\n"),
            "6: eval.decode_metrics: unknown metric 'wer' (expected one of sequence_error_rate, "
            "token_error_rate, bleu, chrf)");
  EXPECT_EQ(error_in(seq2seq + "[bleu, bleu]}\n"), "6: eval.decode_metrics: lists 'bleu' twice");
  EXPECT_EQ(error_in(seq2seq + "[bleu, chrf], load_best_model_at_end: true, "
                               "metric_for_best_model: token_error_rate}\n"),
            "6: eval.metric_for_best_model: unknown metric 'token_error_rate' (expected one of "
            "loss, perplexity, accuracy, bleu, chrf)");
  EXPECT_EQ(load_run_config(write(seq2seq + "[bleu, chrf], load_best_model_at_end: true, "
                                            "metric_for_best_model: chrf}\n"))
                .eval.decode_metrics,
            (std::vector<std::string>{"bleu", "chrf"}));
  // DistilBERT's keys are its own (dim, n_heads), and so are its messages.
  EXPECT_EQ(error_in(R"(task: mlm
model: {arch: distilbert, dim: 64, n_heads: 5}
tokenizer: {type: wordpiece, vocab_size: 100}
data: {train: {DIR}/train.txt}
train: {max_steps: 10, output_dir: out}
)"),
            "2: model.n_heads: 5 does not divide model.dim 64");
  EXPECT_EQ(error_in(R"(task: mlm
model: {arch: distilbert, hidden_size: 64}
tokenizer: {type: wordpiece, vocab_size: 100}
data: {train: {DIR}/train.txt}
train: {max_steps: 10, output_dir: out}
)"),
            "2: unknown key 'model.hidden_size' (did you mean 'model.hidden_dim'?)");
  EXPECT_EQ(error_in(R"(task: classification
model: {arch: distilbert, seq_classif_dropout: 1.5}
tokenizer: {type: wordpiece, vocab_size: 100}
data: {train: {DIR}/train.txt}
train: {max_steps: 10, output_dir: out}
)"),
            "2: model.seq_classif_dropout: must be in [0, 1), got 1.5");
}

TEST_F(Config, BestModelChoice) {
  const std::string load_best = "  every_steps: 50\n  load_best_model_at_end: true";
  EXPECT_EQ(error_in(base_with("  every_steps: 50",
                               "  every_steps: 50\n  metric_for_best_model: "
                               "accuracy")),
            "29: eval.metric_for_best_model: has no effect without "
            "eval.load_best_model_at_end: true");
  EXPECT_EQ(
      error_in(base_with("  every_steps: 50", "  every_steps: 50\n  greater_is_better: true")),
      "29: eval.greater_is_better: has no effect without eval.load_best_model_at_end: true");
  EXPECT_EQ(error_in(base_with("  every_steps: 50",
                               "  every_steps: 0\n  load_best_model_at_end: "
                               "true")),
            "29: eval.load_best_model_at_end: needs eval.every_steps > 0: without evaluations "
            "during training there is nothing to choose among");
  std::string without_valid = base_with("  valid: {DIR}/valid.txt\n", "");
  without_valid.replace(without_valid.find("  every_steps: 50"), 17,
                        "  every_steps: 0\n  load_best_model_at_end: true");
  EXPECT_EQ(error_in(without_valid),
            "28: eval.load_best_model_at_end: needs data.valid, whose evaluations it chooses "
            "among");
  EXPECT_EQ(error_in(base_with("  every_steps: 50", load_best + "\n  metric_for_best_model: "
                                                                "acuracy")),
            "30: eval.metric_for_best_model: unknown metric 'acuracy' (did you mean "
            "'accuracy'?)");
  EXPECT_EQ(error_in(base_with("  every_steps: 50",
                               load_best + "\n  metric_for_best_model: token_error_rate")),
            "30: eval.metric_for_best_model: unknown metric 'token_error_rate' (expected one of "
            "loss, perplexity, accuracy, bits_per_byte)");

  // Hugging Face's "eval_" prefix is accepted; the metric and direction load as written.
  const RunConfig c = load_run_config(write(base_with(
      "  every_steps: 50",
      load_best + "\n  metric_for_best_model: eval_accuracy\n  greater_is_better: false")));
  EXPECT_TRUE(c.eval.load_best_model_at_end);
  EXPECT_EQ(c.eval.metric_for_best_model, "eval_accuracy");
  EXPECT_EQ(c.eval.greater_is_better, false);
  // A classifier's per-class names are its training file's labels when the config does not
  // list them...
  std::ofstream(dir() + "/spam.tsv") << "ham\thello world\nspam\tbuy now\n";
  const std::string classification =
      "task: classification\nmodel: {arch: bert, hidden_size: 64, num_attention_heads: 4}\n"
      "tokenizer: {vocab: {DIR}/vocab.txt}\n"
      "data: {train: {DIR}/spam.tsv, valid: {DIR}/valid.txt}\n"
      "train: {max_steps: 10, output_dir: out}\n"
      "eval: {every_steps: 5, load_best_model_at_end: true, metric_for_best_model: spam_f1";
  EXPECT_EQ(error_of(write(classification + "}\n")), "");
  EXPECT_EQ(error_in(replace_all(classification, ": spam_f1", ": spma_f1") + "}\n"),
            "6: eval.metric_for_best_model: unknown metric 'spma_f1' (did you mean 'spam_f1'?)");
  // ...and data.labels when it does.
  EXPECT_EQ(
      error_of(write(replace_all(classification, "valid.txt}", "valid.txt, labels: [ham, spam]}") +
                     ", greater_is_better: true}\n")),
      "");
  EXPECT_EQ(error_in(replace_all(classification, "valid.txt}", "valid.txt, labels: [ham, spma]}") +
                     "}\n"),
            "6: eval.metric_for_best_model: unknown metric 'spam_f1' (did you mean 'spma_f1'?)");
}

TEST_F(Config, UnknownNames) {
  EXPECT_EQ(error_in(base_with("task: mlm", "task: mlmm")),
            "1: task: unknown task 'mlmm' (did you mean 'mlm'?)");
  EXPECT_EQ(error_in(base_with("task: mlm", "task: translation")),
            "1: task: unknown task 'translation' (expected one of mlm, distill, clm, seq2seq, "
            "span_corruption, classification, token_classification)");
  EXPECT_EQ(error_in(base_with("  arch: bert", "  arch: xlnet")),
            "3: model.arch: unknown arch 'xlnet' (expected one of bert, gpt2, bart, roberta, "
            "distilbert, t5)");
  EXPECT_EQ(error_in(base_with("  lr: 5.0e-4", "  name: adam")),
            "18: optim.name: unknown optimizer 'adam' (did you mean 'adamw'?)");
  EXPECT_EQ(error_in(base_with("  name: cosine", "  name: exponential")),
            "21: schedule.name: unknown schedule 'exponential' (expected one of constant, linear, "
            "cosine)");
  EXPECT_EQ(error_in(base_with("  hidden_size: 64", "  hidden_size: 64\n  hidden_act: gelu2")),
            "5: model.hidden_act: unknown activation 'gelu2' (did you mean 'gelu'?)");
  EXPECT_EQ(error_in(base_with("  hidden_size: 64", "  hidden_size: 64\n  hidden_act: swish")),
            "5: model.hidden_act: unknown activation 'swish' (expected one of gelu, gelu_new, "
            "gelu_pytorch_tanh, relu)");
  EXPECT_EQ(error_in(base_with("  type: wordpiece", "  type: unigram")),
            "10: tokenizer.type: unknown tokenizer type 'unigram' (expected one of wordpiece, bpe, "
            "sentencepiece, char)");
  // Masked-LM asks an encoder's questions ([MASK], [CLS]): BERT's of WordPiece, RoBERTa's of its
  // byte-level BPE.
  EXPECT_EQ(error_in(base_with("  type: wordpiece", "  type: bpe")),
            "10: tokenizer.type: task 'mlm' with model.arch bert needs a wordpiece tokenizer");
  EXPECT_EQ(error_in(base_with("  type: wordpiece", "  type: wordpiece\n  model_type: bpe2")),
            "11: tokenizer.model_type: 'bpe2' is not a SentencePiece model type heed trains "
            "(unigram or bpe)");
  EXPECT_EQ(
      error_in(base_with("  max_seq_length: 64", "  max_seq_length: 64\n  truncation: middle")),
      "17: data.truncation: unknown truncation 'middle' (expected one of head, tail, "
      "head_tail)");
}

TEST_F(Config, ActivationNamesAreTheModelsOwn) {
  for (const char* name : {"gelu", "gelu_new", "gelu_pytorch_tanh", "relu"}) {
    EXPECT_NO_THROW(nn::parse_activation(name)) << name;
  }
}

TEST_F(Config, TaskMustSuitTheArchitecture) {
  EXPECT_EQ(error_in(base_with("task: mlm", "task: clm")),
            "1: task: 'clm' needs model.arch gpt2, got bert");
  EXPECT_EQ(error_in(base_with("task: mlm", "task: seq2seq")),
            "1: task: 'seq2seq' needs model.arch bart or t5, got bert");
  EXPECT_EQ(error_in(R"(task: mlm
model: {arch: gpt2}
data: {train: {DIR}/train.txt}
train: {max_steps: 10, output_dir: out}
)"),
            "1: task: 'mlm' needs model.arch bert, roberta or distilbert, got gpt2");
  EXPECT_EQ(error_in(base_with("  type: wordpiece", "  type: char")),
            "10: tokenizer.type: task 'mlm' with model.arch bert needs a wordpiece tokenizer");
  EXPECT_EQ(error_in(base_with("  lowercase: true", "  target_unit: whitespace")),
            "12: tokenizer.target_unit: only a char tokenizer of a seq2seq task splits its "
            "targets differently");
}

TEST_F(Config, MissingFiles) {
  EXPECT_EQ(error_in(base_with("  train: {DIR}/train.txt", "  train: missing/lm/train.txt")),
            "14: data.train: file 'missing/lm/train.txt' does not exist");
  EXPECT_EQ(error_in(base_with("  valid: {DIR}/valid.txt", "  valid: {DIR}/nope.txt")),
            "15: data.valid: file '" + dir() + "/nope.txt' does not exist");
  EXPECT_EQ(error_in(base_with("  valid: {DIR}/valid.txt", "  valid: {DIR}")),
            "15: data.valid: '" + dir() + "' is a directory, not a file");
  EXPECT_EQ(
      error_in(base_with("  max_seq_length: 64", "  max_seq_length: 64\n  test: missing/test.tsv")),
      "17: data.test: file 'missing/test.tsv' does not exist");
  EXPECT_EQ(error_in(base_with("tokenizer:", "init_from: {DIR}/no_ckpt\ntokenizer:")),
            "9: init_from: directory '" + dir() + "/no_ckpt' does not exist");
  EXPECT_EQ(error_in(base_with("  vocab: {DIR}/vocab.txt", "  vocab: data/vocab.txt")),
            "11: tokenizer.vocab: file 'data/vocab.txt' does not exist (set tokenizer.vocab_size "
            "to train one)");
  // With vocab_size, a missing vocab file is one the trainer will train.
  EXPECT_NO_THROW(load_run_config(write(
      base_with("  vocab: {DIR}/vocab.txt", "  vocab: {DIR}/new_vocab.txt\n  vocab_size: 300"))));
}

TEST_F(Config, MalformedYamlGivesTheParserErrorAndLine) {
  EXPECT_EQ(error_in(base_with("  betas: [0.9, 0.98]", "  betas: [0.9, 0.98")),
            "20: invalid YAML: end of sequence flow not found");
  EXPECT_EQ(
      error_in(base_with("  output_dir: {DIR}/run\n", "  output_dir: {DIR}/run\n  max_steps: 5\n")),
      "27: duplicate key 'train.max_steps' (first at line 25)");
  EXPECT_EQ(error_in("- a\n- b\n"), "1: expected a mapping of sections (task, model, data, ...)");
  EXPECT_EQ(error_of(dir() + "/absent.yaml"), dir() + "/absent.yaml: cannot read the config file");
}

// `train --config DIR` and a config nested past the parser's limit say what is wrong, not
// "missing required key 'task'" or yaml-cpp's "bad file".
TEST_F(Config, ADirectoryOrANestingTooDeepIsNamed) {
  EXPECT_EQ(error_of(dir()), dir() + ": is a directory, not a YAML config file");
  try {
    read_pipeline(dir());  // what the train program reads first
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), dir() + ": is a directory, not a YAML config file");
  }
  const std::string flow = "task: mlm\nmodel: " + std::string(600, '[') + std::string(600, ']');
  EXPECT_EQ(error_in(flow), "2: invalid YAML: nested more than 500 levels deep");
  std::string block = "task: mlm\n";
  for (int i = 0; i < 600; ++i) block += std::string(2 * i, ' ') + "k:\n";
  const std::string message = error_in(block);
  EXPECT_TRUE(message.ends_with(": invalid YAML: nested more than 500 levels deep")) << message;
}

// YAML 1.1's merge key: the merged mapping's keys count where the mapping does not set them
// itself, and of a list of merged mappings the first wins.
TEST_F(Config, MergeKeysMergeTheAliasedMappings) {
  const std::string eval = "eval:\n  every_steps: 50\n";
  const std::string merged = base_with(eval,
                                       "logging: &every {every_steps: 25}\n"
                                       "eval:\n"
                                       "  <<: *every\n"
                                       "  max_batches: 3\n");
  RunConfig c = load_run_config(write(merged));
  EXPECT_EQ(c.eval.every_steps, 25);
  EXPECT_EQ(c.eval.max_batches, 3);
  EXPECT_EQ(c.logging.every_steps, 25);
  // An override changes the merging mapping, not the anchor.
  c = load_run_config(write(merged), {"eval.every_steps=7"});
  EXPECT_EQ(c.eval.every_steps, 7);
  EXPECT_EQ(c.logging.every_steps, 25);
  // The mapping's own keys win, before or after the merge key.
  for (const std::string own :
       {"  every_steps: 10\n  <<: *every\n", "  <<: *every\n  every_steps: 10\n"}) {
    c = load_run_config(write(base_with(eval, "logging: &every {every_steps: 25}\neval:\n" + own)));
    EXPECT_EQ(c.eval.every_steps, 10) << own;
  }
  // A list of mappings: the first that has a key gives it.
  const std::string eval_and_checkpoint = eval + "checkpoint: {keep_last: 2}\n";
  for (const auto& [list, expected] :
       std::vector<std::pair<std::string, int64_t>>{{"[*a, *b]", 5}, {"[*b, *a]", 40}}) {
    c = load_run_config(write(base_with(eval_and_checkpoint,
                                        "logging: &a {every_steps: 5}\n"
                                        "checkpoint: &b {every_steps: 40}\n"
                                        "eval:\n"
                                        "  <<: " +
                                            list + "\n")));
    EXPECT_EQ(c.eval.every_steps, expected) << list;
    EXPECT_EQ(c.checkpoint.every_steps, 40);
  }
  // A merge at the top, of an inline mapping: an override of one key of a merged section
  // keeps its other keys.
  const std::string optim = "optim:\n  lr: 5.0e-4\n  betas: [0.9, 0.98]\n";
  c = load_run_config(write(base_with(optim, "<<: {optim: {lr: 5.0e-4, betas: [0.9, 0.98]}}\n")),
                      {"optim.lr=3e-4"});
  EXPECT_DOUBLE_EQ(c.optim.lr, 3e-4);
  EXPECT_DOUBLE_EQ(c.optim.betas[1], 0.98);
}

// A merged key is checked as any other, at the line its value is written on; a merge key that
// names no mapping is an error naming it and its line.
TEST_F(Config, MergeKeyErrorsNameTheLine) {
  const std::string eval = "eval:\n  every_steps: 50\n";
  const std::string unknown = error_in(base_with(eval + "checkpoint: {keep_last: 2}\n",
                                                 "logging: &a {every_steps: 5}\n"  // 27
                                                 "checkpoint: &b {every_steps: 40, keep_last: "
                                                 "2}\n"                 // 28
                                                 "eval:\n"              // 29
                                                 "  <<: [*a, *b]\n"));  // 30
  EXPECT_TRUE(unknown.starts_with("28: unknown key 'eval.keep_last'")) << unknown;
  EXPECT_EQ(error_in(base_with(eval, "eval:\n  <<: 5\n")),
            "28: '<<' (a YAML merge key) takes a mapping or a list of mappings, as <<: *name, "
            "got '5'");
  EXPECT_EQ(error_in(base_with(eval, "logging: &a {every_steps: 5}\neval:\n  <<: *a\n  <<: *a\n")),
            "30: duplicate key 'eval.<<' (first at line 29)");
  EXPECT_EQ(error_in(base_with(eval, "eval: &e\n  max_batches: 2\n  <<: *e\n")),
            "29: '<<' (a YAML merge key) merges a mapping into itself");
}

TEST_F(Config, OverridesApplyBeforeValidation) {
  const std::string path = write(kBase);
  const RunConfig c = load_run_config(
      path, {"optim.lr=3e-4", "optim.betas=[0.9,0.95]", "data.test=" + dir() + "/test.txt",
             "train.resume=auto", "logging.every_steps=5", "model.hidden_dropout_prob=0.0"});
  EXPECT_DOUBLE_EQ(c.optim.lr, 3e-4);
  EXPECT_DOUBLE_EQ(c.optim.betas[0], 0.9);
  EXPECT_DOUBLE_EQ(c.optim.betas[1], 0.95);
  EXPECT_EQ(c.data.test, dir() + "/test.txt");
  EXPECT_EQ(c.train.resume, Resume::kAuto);
  EXPECT_EQ(c.logging.every_steps, 5);
  EXPECT_DOUBLE_EQ(c.model.as<nn::BertConfig>().hidden_dropout_prob, 0.0);
}

TEST_F(Config, OverridesThatFailNameTheOverride) {
  const std::string path = write(kBase);
  EXPECT_EQ(error_of(path, {"optim.learning_rate=3e-4"}),
            "--set optim.learning_rate=3e-4: unknown key 'optim.learning_rate' (did you mean "
            "'optim.lr'?)");
  EXPECT_EQ(error_of(path, {"train.batch_size=abc"}),
            "--set train.batch_size=abc: train.batch_size: expected an integer, got 'abc'");
  EXPECT_EQ(error_of(path, {"optim.lr=-1"}), "--set optim.lr=-1: optim.lr: must be > 0, got -1");
  EXPECT_EQ(error_of(path, {"optim.lr"}),
            "--set optim.lr: expected key=value with a dotted key, as optim.lr=3e-4");
  EXPECT_EQ(error_of(path, {"optim..lr=1"}),
            "--set optim..lr=1: expected key=value with a dotted key, as optim.lr=3e-4");
  EXPECT_EQ(error_of(path, {"optim.lr.x=1"}),
            "--set optim.lr.x=1: 'optim.lr' is a value, not a section");
  EXPECT_EQ(error_of(path, {"optim.betas=[0.9"}),
            "--set optim.betas=[0.9: invalid YAML value: end of sequence flow not found");
  // A whole section replaced: its keys are the override's.
  EXPECT_EQ(error_of(path, {"optim={lr: 1e-3, beta: 0.9}"}),
            "--set optim={lr: 1e-3, beta: 0.9}: unknown key 'optim.beta' (did you mean "
            "'optim.betas'?)");
  // Switching the architecture makes the file's model keys unknown, at their lines.
  EXPECT_EQ(error_of(path, {"model.arch=gpt2"}),
            path + ":4: unknown key 'model.hidden_size' (a bert key, but model.arch is gpt2)");
}

TEST_F(Config, ToYamlRoundTrips) {
  const std::vector<std::string> configs = {kBase,
                                            R"(task: classification
model: {arch: bert, hidden_size: 64, num_attention_heads: 2, classifier_dropout: 0.25,
        position_embedding_type: sinusoidal, layer_norm_eps: 1.0e-7}
init_from: {DIR}/ckpt
tokenizer: {lowercase: false, strip_accents: true}
data: {train: {DIR}/train.txt, labels: [ham, "not spam", "null", "a\"b", "", "x: y"]}
optim: {name: sgd, lr: 0.1, momentum: 0.9, decay_rate: -0.6, scale_parameter: false}
train: {max_steps: 7, output_dir: "runs/with space", seed: 0, dtype: bf16}
eval: {batch_size: 3}
logging: {progress: never}
)",
                                            R"(task: clm
model: {arch: gpt2, n_embd: 96, n_head: 6, vocab_size: 300, eos_token_id: 0}
tokenizer: {type: char, vocab: {DIR}/chars.json}
data: {train: {DIR}/train.txt, shuffle: false, prefetch: 0}
schedule: {name: constant}
train: {max_steps: 3, output_dir: out, max_grad_norm: 0.0}
)",
                                            R"(task: seq2seq
model: {arch: bart, d_model: 32, encoder_attention_heads: 2, decoder_attention_heads: 4,
        dropout: 0.3, pad_token_id: 0, bos_token_id: 1}
tokenizer: {type: char, unit: whitespace}
data: {train: {DIR}/train.txt, max_source_length: 20, max_target_length: 30}
train: {max_steps: 3, output_dir: out}
generation: {num_beams: 5}
)"};
  for (const std::string& text : configs) {
    const RunConfig first = load_run_config(write(text, "first.yaml"));
    const std::string yaml = to_yaml(first);
    const RunConfig second = load_run_config(write(yaml, "second.yaml"));
    EXPECT_EQ(to_yaml(second), yaml);
    // Every key appears, in schema order.
    std::vector<std::string> written;
    std::istringstream lines(yaml);
    for (std::string line; std::getline(lines, line);) {
      written.push_back(
          line.substr(line.find_first_not_of(' '), line.find(':') - line.find_first_not_of(' ')));
    }
    std::vector<std::string> expected;
    for (const std::string& key : config_keys(first.model.arch())) {
      expected.push_back(key.substr(key.rfind('.') + 1));
    }
    EXPECT_EQ(written, expected);
  }
  // Spot checks that the values survived, not just the text.
  const RunConfig c =
      load_run_config(write(to_yaml(load_run_config(write(configs[1], "a.yaml"))), "b.yaml"));
  EXPECT_EQ(c.data.labels,
            (std::vector<std::string>{"ham", "not spam", "null", "a\"b", "", "x: y"}));
  EXPECT_EQ(c.train.output_dir, "runs/with space");
  EXPECT_EQ(c.tokenizer.strip_accents, true);
  const nn::BertConfig& bert = c.model.as<nn::BertConfig>();
  EXPECT_DOUBLE_EQ(bert.layer_norm_eps, 1e-7);
  EXPECT_EQ(bert.classifier_dropout, 0.25);
  EXPECT_EQ(c.optim.name, OptimizerName::kSgd);
  EXPECT_DOUBLE_EQ(c.optim.momentum, 0.9);
  EXPECT_DOUBLE_EQ(c.optim.decay_rate, -0.6);
  EXPECT_FALSE(c.optim.scale_parameter);
  EXPECT_EQ(c.logging.progress, Progress::kNever);
  EXPECT_EQ(c.eval.batch_size, 3);
}

TEST_F(Config, ToYamlWritesNullForUnsetValues) {
  const std::string yaml = to_yaml(load_run_config(write(kBase)));
  EXPECT_NE(yaml.find("  vocab_size: null\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("init_from: null\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("  lr: 0.0005\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("  max_grad_norm: 1.0\n"), std::string::npos) << yaml;
}

TEST_F(Config, DidYouMean) {
  EXPECT_EQ(edit_distance("train", "trian"), 1u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  const std::vector<std::string> keys{"lr", "betas", "eps", "weight_decay"};
  EXPECT_EQ(did_you_mean("beta", keys), "betas");
  EXPECT_EQ(did_you_mean("weight_decy", keys), "weight_decay");
  EXPECT_EQ(did_you_mean("momentum", keys), std::nullopt);
}

// Every shipped config passes every check but, possibly, the existence of its data files and
// init_from checkpoint, which come last and need prepared corpora or an earlier run. Paths
// resolve against the working directory, so the configs load from the repository root.
TEST_F(Config, ShippedConfigsValidate) {
  struct RestoreDirectory {
    fs::path previous = fs::current_path();
    ~RestoreDirectory() { fs::current_path(previous); }
  } restore;
  fs::current_path(HEED_SOURCE_DIR);
  int checked = 0;
  for (const char* dir : {"configs", "configs/tiny"}) {
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.path().extension() != ".yaml") continue;
      ++checked;
      if (auto stages = read_pipeline(entry.path().string())) {  // its stages are checked here too
        for (const PipelineStage& stage : *stages) {
          EXPECT_TRUE(fs::exists(stage.config)) << entry.path() << ": " << stage.config;
        }
        continue;
      }
      try {
        load_run_config(entry.path().string());
      } catch (const std::exception& e) {
        const std::string message = e.what();
        const bool missing_input = message.find("does not exist") != std::string::npos &&
                                   (message.find(": data.") != std::string::npos ||
                                    message.find(": init_from") != std::string::npos ||
                                    message.find(": distill.teacher") != std::string::npos);
        EXPECT_TRUE(missing_input) << entry.path() << ": " << message;
      }
    }
  }
  EXPECT_GE(checked, 10);
}

TEST_F(Config, ReadmeDocumentsEveryKey) {
  std::ifstream in(std::string(HEED_SOURCE_DIR) + "/configs/README.md");
  ASSERT_TRUE(in) << "configs/README.md";
  std::stringstream text;
  text << in.rdbuf();
  const std::string readme = text.str();
  for (Arch arch :
       {Arch::kBert, Arch::kGpt2, Arch::kBart, Arch::kRoberta, Arch::kDistilBert, Arch::kT5}) {
    for (const std::string& key : config_keys(arch)) {
      EXPECT_NE(readme.find("`" + key + "`"), std::string::npos) << key;
    }
  }
}

// The key tables are generated (train --list-keys --markdown); this keeps them so.
TEST_F(Config, ReadmeKeyTablesMatchSchema) {
  const std::string path = std::string(HEED_SOURCE_DIR) + "/configs/README.md";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::stringstream text;
  text << in.rdbuf();
  const std::string readme = text.str();
  const std::string begin = "<!-- BEGIN generated: train --list-keys --markdown -->\n";
  const std::string end = "<!-- END generated: train --list-keys --markdown -->\n";
  const size_t from = readme.find(begin), to = readme.find(end);
  ASSERT_TRUE(from != std::string::npos && to != std::string::npos && from < to)
      << path << " lacks the markers " << begin << end;
  const std::string tables = readme.substr(from + begin.size(), to - from - begin.size());
  if (tables == keys_markdown()) return;
  const std::string regenerated = fs::absolute("README.md.regenerated").string();
  std::ofstream(regenerated) << readme.substr(0, from + begin.size()) << keys_markdown()
                             << readme.substr(to);
  ADD_FAILURE() << "configs/README.md's key tables differ from the schema "
                   "(train/config/config_schema.h). Regenerate them: cp "
                << regenerated << " " << path
                << " (or paste the output of `train --list-keys --markdown` between the markers)";
}

}  // namespace
}  // namespace heed::train
