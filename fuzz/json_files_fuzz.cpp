// The readers of a model directory's JSON files and of trainer_state.json. Byte 0 chooses
// the file (its value modulo 4); the rest is the file's bytes:
//   0  config.json            nn::read_model_config, declared_architecture, the architecture's
//                             config reader (nn/models/config_json.h) and validate(); a
//                             config small enough is built (nn::model_from_config)
//   1  tokenizer_config.json  data::tokenizer_class, load_truncation and load_wordpiece (or
//                             TextTokenizer::load for the other classes) of a directory that
//                             also holds a fixed vocab.txt, char_tokenizer.json, and a byte-level
//                             BPE's vocab.json and merges.txt
//   2  char_tokenizer.json    data::CharTokenizer::load, then the tokenizer on a fixed text
//   3  trainer_state.json     io::read_json_file and what the trainer's resume reads of it, in
//                             its order, through the real readers of its parts (the data order
//                             check, BestModel::load_state, LRScheduler::load_state_dict)
#include <filesystem>

#include "data/byte_level_bpe.h"
#include "data/char_tokenizer.h"
#include "data/text_tokenizer.h"
#include "data/tokenizer_io.h"
#include "fuzz/fuzz_util.h"
#include "io/json_fields.h"
#include "io/json_file.h"
#include "io/utf8.h"
#include "nn/models/config_json.h"
#include "nn/pretrained_io.h"
#include "optim/adamw.h"
#include "optim/schedule.h"
#include "train/checkpoint/training_checkpoint.h"
#include "train/checkpoint/training_state.h"
#include "train/run/best_model.h"

namespace {

namespace fs = std::filesystem;
using heed::fuzz::write_scratch;

// Whether every integer of a model config is at most 64 (and it has at most 4 layers), so
// that building the model costs little.
struct SmallModel {
  bool small = true;
  void field(const char* name, int64_t value, const heed::nn::Field&) {
    const std::string_view n = name;
    const bool is_layers = n.ends_with("layers") || n == "n_layer";
    small = small && value <= (is_layers ? 4 : 64);
  }
  template <typename T>
  void field(const char*, const T&, const heed::nn::Field&) {}
  void divides(const char*, int64_t, const char*, int64_t) {}
};

template <typename Config>
void check_model_config(const nlohmann::json& json, Config (*read)(const nlohmann::json&)) {
  const Config config = read(json);
  config.validate();
  SmallModel small;
  Config::visit(config, small);
  if (small.small) heed::nn::model_from_config(json, 0);
}

void model_config(std::string_view bytes) {
  const fs::path dir = heed::fuzz::scratch_dir() / "model";
  write_scratch("model/config.json", bytes);
  const nlohmann::json json = heed::nn::read_model_config(dir.string());
  const std::string architecture = heed::nn::declared_architecture(json);
  // The readers of model_from_config's table, by architecture.
  if (architecture.starts_with("Bert")) {
    check_model_config(json, heed::nn::bert_config_from_json);
  } else if (architecture == "GPT2LMHeadModel") {
    check_model_config(json, heed::nn::gpt2_config_from_json);
  } else if (architecture == "BartForConditionalGeneration") {
    check_model_config(json, heed::nn::bart_config_from_json);
  } else {
    heed::nn::model_from_config(json, 0);  // an unsupported architecture: must throw
    HEED_FUZZ_REQUIRE(!"model_from_config built an architecture outside its table");
  }
}

constexpr std::string_view kVocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nthe\ndog\n##s\n.\n";
constexpr std::string_view kCharTokenizer =
    R"({"unit": "character", "tokens": ["[PAD]", "[UNK]", "[BOS]", "[EOS]", "a", "b"]})";
constexpr std::string_view kText = "The dogs. ab\xC3\xA9 [MASK]";

// A byte-level BPE vocabulary of the 256 byte symbols and the special tokens of GPT-2 and
// RoBERTa, with no merges: what a GPT2Tokenizer or RobertaTokenizer class reads.
std::string tiny_bpe_vocab_json() {
  nlohmann::json vocab = nlohmann::json::object();
  int32_t id = 0;
  for (char32_t symbol : heed::data::bytes_to_unicode()) {
    std::string utf8;
    heed::io::append_utf8(utf8, symbol);
    vocab[utf8] = id++;
  }
  for (const char* special : {"<|endoftext|>", "<s>", "</s>", "<unk>", "<pad>", "<mask>"})
    vocab[special] = id++;
  return vocab.dump();
}

void tokenizer_config(std::string_view bytes) {
  static const std::string bpe_vocab = tiny_bpe_vocab_json();
  write_scratch("tok/vocab.txt", kVocab);
  write_scratch("tok/char_tokenizer.json", kCharTokenizer);
  write_scratch("tok/vocab.json", bpe_vocab);
  write_scratch("tok/merges.txt", "#version: 0.2\n");
  write_scratch("tok/tokenizer_config.json", bytes);
  const std::string dir = (heed::fuzz::scratch_dir() / "tok").string();
  const std::string cls = heed::data::tokenizer_class(dir);
  const heed::data::TruncationSettings truncation = heed::data::load_truncation(dir);
  HEED_FUZZ_REQUIRE(!truncation.max_length || *truncation.max_length > 0);
  if (cls == "BertTokenizer") {
    const heed::data::WordPieceTokenizer t = heed::data::load_wordpiece(dir);
    t.encode(kText, static_cast<size_t>(truncation.max_length.value_or(0)), truncation.side);
    return;
  }
  // Every other class through the one interface (the BPE's special-token roles come from the
  // fuzzed file).
  const heed::data::TextTokenizer t = heed::data::TextTokenizer::load(dir);
  for (int32_t id : t.encode_source(kText)) HEED_FUZZ_REQUIRE(id >= 0 && id < t.vocab_size());
}

void char_tokenizer(std::string_view bytes) {
  const std::string path = write_scratch("char_tokenizer.json", bytes);
  const heed::data::CharTokenizer t = heed::data::CharTokenizer::load(path);
  for (int32_t id : t.encode(kText)) HEED_FUZZ_REQUIRE(id >= 0 && id < t.vocab_size());
}

// The trainer's resume (train/run/run_checkpoints.cpp), in its order, of a run with the default
// config, an AdamW and a linear schedule, that tracks the best model by loss.
void trainer_state(std::string_view bytes) {
  const std::string dir = (heed::fuzz::scratch_dir() / "checkpoint-1").string();
  const std::string path = write_scratch("checkpoint-1/trainer_state.json", bytes);
  const nlohmann::json json = heed::io::read_json_file(path);
  const heed::io::JsonFields state(json, path);
  heed::train::check_data_order(state, heed::train::RunConfig{}, dir);
  heed::train::BestModel best("loss", false);
  if (state.has("best_model")) {
    best.load_state(state.object("best_model"), dir);
  } else {
    (void)state.int64("step");
  }
  // Two groups, as the trainer's AdamW has: decayed weights, and biases and norms.
  heed::optim::AdamW optimizer(std::vector<heed::optim::ParamGroup>{
      {.params = {{"w", heed::zeros({2})}}},
      {.params = {{"b", heed::zeros({2})}}, .weight_decay = 0.0}});
  heed::optim::LRScheduler scheduler(optimizer, heed::optim::make_schedule("linear", 10, 100));
  scheduler.load_state_dict(state.object("scheduler"));
  const heed::train::TrainingState point = heed::train::read_training_state(state);
  HEED_FUZZ_REQUIRE(point.step >= 0 && scheduler.last_step() >= 0);
  (void)heed::train::to_json(point);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view bytes = heed::fuzz::as_text(data + 1, size - 1);
  heed::fuzz::rejecting_with_heed_errors([&] {
    switch (data[0] % 4) {
      case 0:
        return model_config(bytes);
      case 1:
        return tokenizer_config(bytes);
      case 2:
        return char_tokenizer(bytes);
      default:
        return trainer_state(bytes);
    }
  });
  return 0;
}
