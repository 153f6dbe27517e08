// tiny_transformer: a small causal Transformer built from heed's modules and trained with AdamW
// on synthetic sequences: each counts up from a random start by a random stride (modulo the
// vocabulary), so every token after the second follows from the ones before it.
//   tiny_transformer [steps]       prints the loss as it falls
#include <heed/heed.h>

#include <cstdio>
#include <random>
#include <string>

using namespace heed;

constexpr int64_t kVocab = 16, kDim = 64, kHeads = 4, kLayers = 2, kBatch = 32, kLength = 12;

// Token and position embeddings, pre-LN encoder layers run causally (GPT-2's shape), a head.
class TinyTransformer : public nn::Module {
 public:
  TinyTransformer(Generator& init, std::shared_ptr<Generator> dropout) {
    tokens_ = register_module("tokens", std::make_shared<nn::Embedding>(kVocab, kDim, init));
    positions_ = register_module("positions", std::make_shared<nn::Embedding>(kLength, kDim, init));
    const nn::LayerOptions layer{
        .attention = {.embed_dim = kDim, .num_heads = kHeads},
        .feed_forward = {.hidden_size = kDim, .intermediate_size = 4 * kDim},
        .norm_first = true};
    for (int i = 0; i < kLayers; ++i) {
      layers_.push_back(register_module("layers." + std::to_string(i),
                                        std::make_shared<nn::EncoderLayer>(layer, init, dropout)));
    }
    norm_ = register_module("norm", std::make_shared<nn::LayerNorm>(kDim, 1e-5));
    head_ = register_module("head", std::make_shared<nn::Linear>(kDim, kVocab, init));
  }

  // ids [B, T] -> logits [B, T, vocab]; position t sees positions 0..t only.
  Tensor forward(const Tensor& ids) const {
    Tensor x = tokens_->forward(ids) + positions_->forward(arange(0, ids.shape()[1]));
    for (const auto& layer : layers_) x = layer->forward(x, {.causal = true});
    return head_->forward(norm_->forward(x));
  }

 private:
  std::shared_ptr<nn::Embedding> tokens_, positions_;
  std::vector<std::shared_ptr<nn::EncoderLayer>> layers_;
  std::shared_ptr<nn::LayerNorm> norm_;
  std::shared_ptr<nn::Linear> head_;
};

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::stoi(argv[1]) : 150;
  Generator init(42);
  TinyTransformer model(init, std::make_shared<Generator>(7));
  optim::AdamW optimizer(model.named_parameters(), {.lr = 3e-3, .weight_decay = 0.01});
  std::mt19937 rng(1);
  double first = 0.0, last = 0.0;
  for (int step = 1; step <= steps; ++step) {
    // A batch of sequences of kLength + 1 tokens: inputs are the first kLength, targets the last.
    std::vector<int64_t> inputs, targets;
    for (int64_t b = 0; b < kBatch; ++b) {
      const int64_t start = rng() % kVocab, stride = 1 + rng() % 3;
      for (int64_t t = 0; t < kLength; ++t) {
        inputs.push_back((start + t * stride) % kVocab);
        targets.push_back((start + (t + 1) * stride) % kVocab);
      }
    }
    const Tensor logits = model.forward(from_vector(inputs, {kBatch, kLength}));
    Tensor loss =
        cross_entropy(logits.reshape({-1, kVocab}), from_vector(targets, {kBatch * kLength}));
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
    last = loss.item();
    if (step == 1) first = last;
    if (step == 1 || step % 25 == 0) std::printf("step %4d  loss %.4f\n", step, last);
  }
  std::printf("loss %s from %.4f to %.4f\n", last < first ? "fell" : "did not fall", first, last);
  return last < first ? 0 : 1;
}
