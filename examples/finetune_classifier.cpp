// finetune_classifier: loads a Hugging Face BERT model directory (config.json, model.safetensors,
// vocab.txt: a masked-LM checkpoint of `train`, or one from transformers), puts a new
// classification head on its encoder, fine-tunes it on a TSV file of "label<TAB>text" lines,
// and saves a checkpoint that `infer classify --checkpoint OUT --text "..."` reads.
//   finetune_classifier MODEL_DIR TRAIN.tsv OUT_DIR [epochs]
#include <heed/heed.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <random>
#include <string>

using namespace heed;

// A batch of examples as the model takes it; labels are [B].
nn::ModelInputs model_inputs(const data::Batch& batch) {
  const Shape shape{batch.batch_size, batch.seq_len};
  return {.input_ids = from_vector(batch.input_ids, shape),
          .attention_mask = from_vector(batch.attention_mask, shape),
          .token_type_ids = from_vector(batch.token_type_ids, shape),
          .labels = from_vector(batch.labels, {batch.batch_size})};
}

int run(const std::string& model_dir, const std::string& tsv, const std::string& out_dir,
        int epochs) {
  const data::WordPieceTokenizer tokenizer = data::load_wordpiece(model_dir);
  nn::BertConfig config = nn::bert_config_from_json(nn::read_model_config(model_dir));
  const data::TextClassificationDataset train(tsv, tokenizer, config.max_position_embeddings);
  config.num_labels = static_cast<int64_t>(train.labels().size());
  config.id2label = train.labels();  // what infer prints

  // The encoder's weights come from the directory; the pooler and classifier start fresh.
  nn::BertForSequenceClassification model(config, /*seed=*/0);
  const nn::LoadReport report = nn::load_weights(
      model, io::SafetensorsFile((std::filesystem::path(model_dir) / "model.safetensors").string()),
      {.strict = false});
  std::printf("loaded %zu tensors; new: %zu (the head); unused: %zu (the old head)\n",
              report.loaded.size(), report.missing.size(), report.unexpected.size());

  optim::AdamW optimizer(optim::weight_decay_groups(model.named_parameters(), 0.01), {.lr = 2e-3});
  std::vector<size_t> order(train.size());
  std::iota(order.begin(), order.end(), 0);
  std::mt19937 rng(0);
  constexpr size_t kBatch = 16;
  model.train();
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    std::shuffle(order.begin(), order.end(), rng);
    double loss_sum = 0.0;
    int64_t correct = 0, batches = 0;
    for (size_t begin = 0; begin < order.size(); begin += kBatch) {
      std::vector<data::Example> examples;
      for (size_t i = begin; i < std::min(order.size(), begin + kBatch); ++i) {
        examples.push_back(train.get(order[i]));
      }
      const data::Batch batch = data::collate_classification(examples, tokenizer.pad_id());
      const nn::ModelOutputs out = model.forward(model_inputs(batch));
      optimizer.zero_grad();
      out.loss.backward();
      optimizer.step();
      loss_sum += out.loss.item();
      ++batches;
      const std::vector<int64_t> predicted = argmax(out.logits, 1).to_vector<int64_t>();
      for (size_t i = 0; i < predicted.size(); ++i) correct += predicted[i] == batch.labels[i];
    }
    std::printf("epoch %d  loss %.4f  train accuracy %.4f\n", epoch, loss_sum / batches,
                static_cast<double>(correct) / static_cast<double>(train.size()));
  }

  // A checkpoint directory as `train` writes one: config.json (with id2label), the weights, and
  // the tokenizer's files, which infer loads from the same directory.
  nn::save_pretrained(model, out_dir);
  data::save_wordpiece(tokenizer, out_dir, config.max_position_embeddings);
  std::printf("saved %s\n", out_dir.c_str());
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 4 || argc > 5) {
    std::fprintf(stderr, "usage: finetune_classifier MODEL_DIR TRAIN.tsv OUT_DIR [epochs]\n");
    return 2;
  }
  try {
    return run(argv[1], argv[2], argv[3], argc == 5 ? std::stoi(argv[4]) : 3);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "finetune_classifier: %s\n", e.what());
    return 1;
  }
}
