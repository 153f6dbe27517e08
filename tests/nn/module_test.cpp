#include <gtest/gtest.h>

#include <memory>

#include "nn/attention.h"
#include "nn/dropout.h"
#include "nn/embedding.h"
#include "nn/layer_norm.h"
#include "nn/linear.h"
#include "support/test_util.h"

using namespace heed;
using namespace heed::nn;

namespace {

// A toy BERT-like layer registering children under Hugging Face's names.
class ToyLayer : public Module {
 public:
  explicit ToyLayer(Generator& init) {
    attention = register_module(
        "attention",
        std::make_shared<MultiHeadAttention>(
            AttentionOptions{.embed_dim = 8,
                             .num_heads = 2,
                             .names = {"self.query", "self.key", "self.value", "output.dense"}},
            init, std::make_shared<Generator>(1)));
    norm = register_module("attention.output.LayerNorm", std::make_shared<LayerNorm>(8));
  }
  std::shared_ptr<MultiHeadAttention> attention;
  std::shared_ptr<LayerNorm> norm;
};

class ToyEncoder : public Module {
 public:
  explicit ToyEncoder(Generator& init) {
    for (int i = 0; i < 2; ++i) {
      layers.push_back(
          register_module("encoder.layer." + std::to_string(i), std::make_shared<ToyLayer>(init)));
    }
    drop =
        register_module("dropout", std::make_shared<Dropout>(0.1, std::make_shared<Generator>(2)));
  }
  std::vector<std::shared_ptr<ToyLayer>> layers;
  std::shared_ptr<Dropout> drop;
};

}  // namespace

TEST(Module, NamedParametersUseHuggingFaceDottedNames) {
  Generator init(1);
  ToyEncoder enc(init);
  std::vector<std::string> names;
  for (auto& [name, t] : enc.named_parameters()) names.push_back(name);
  ASSERT_EQ(names.size(), 2u * 10u);
  EXPECT_EQ(names[0], "encoder.layer.0.attention.self.query.weight");
  EXPECT_EQ(names[1], "encoder.layer.0.attention.self.query.bias");
  EXPECT_EQ(names[6], "encoder.layer.0.attention.output.dense.weight");
  EXPECT_EQ(names[8], "encoder.layer.0.attention.output.LayerNorm.weight");
  EXPECT_EQ(names[19], "encoder.layer.1.attention.output.LayerNorm.bias");
  EXPECT_EQ(enc.num_parameters(), 2 * (4 * (64 + 8) + 16));
}

TEST(Module, TrainAndEvalReachEveryChild) {
  Generator init(1);
  ToyEncoder enc(init);
  enc.eval();
  EXPECT_FALSE(enc.drop->is_training());
  EXPECT_FALSE(enc.layers[1]->attention->is_training());
  Tensor x = ones({4, 8});
  EXPECT_EQ(enc.drop->forward(x).to_vector<float>(), x.to_vector<float>());
  enc.train();
  EXPECT_TRUE(enc.layers[0]->attention->q_proj->is_training());
  EXPECT_NE(enc.drop->forward(ones({64, 8})).to_vector<float>(), ones({64, 8}).to_vector<float>());
}

TEST(Module, ZeroGradDropsEveryGradient) {
  Generator init(1);
  Linear layer(3, 2, init);
  sum(layer.forward(ones({1, 3}))).backward();
  EXPECT_TRUE(layer.weight.grad().defined());
  layer.zero_grad();
  EXPECT_FALSE(layer.weight.grad().defined());
  EXPECT_FALSE(layer.bias.grad().defined());
}

TEST(Module, InitFollowsHuggingFace) {
  Generator init(3);
  Linear layer(256, 256, init);
  std::vector<float> w = layer.weight.to_vector<float>();
  double m = 0, s = 0;
  for (float v : w) m += v;
  m /= w.size();
  for (float v : w) s += (v - m) * (v - m);
  s = std::sqrt(s / w.size());
  EXPECT_NEAR(s, 0.02, 0.02 * 0.05);  // 65536 samples: the std's relative error is ~0.3%
  EXPECT_EQ(layer.bias.to_vector<float>(), std::vector<float>(256, 0.0f));
  Embedding table(10, 4, init, /*padding_idx=*/0);
  EXPECT_EQ(table.weight.select(0, 0).to_vector<float>(), std::vector<float>(4, 0.0f));
  LayerNorm norm(4);
  EXPECT_EQ(norm.weight.to_vector<float>(), std::vector<float>(4, 1.0f));
}

TEST(Module, ATensorRegisteredTwiceIsListedOnce) {
  // Tied weights (a decoder sharing the embedding table) are one tensor under two names;
  // like PyTorch, named_parameters() lists it once, under its first name.
  class Shared : public Module {
   public:
    explicit Shared(const Tensor& t) {
      register_parameter("a", t);
      register_parameter("b", t);
    }
  } shared(zeros({2}));
  ASSERT_EQ(shared.named_parameters().size(), 1u);
  EXPECT_EQ(shared.named_parameters()[0].first, "a");
}
