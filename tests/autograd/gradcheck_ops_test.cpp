// A float64 gradient check for every differentiable op.
#include "support/test_util.h"

using namespace heed;
using heed::testing::expect_gradcheck;
using heed::testing::param;
using heed::testing::positive_param;
using Inputs = std::vector<Tensor>;

TEST(Gradcheck, Add) {
  expect_gradcheck([](const Inputs& x) { return add(x[0], x[1]); },
                   {param({3, 4}, 1), param({3, 4}, 2)});
}
TEST(Gradcheck, AddBroadcast) {
  expect_gradcheck([](const Inputs& x) { return add(x[0], x[1]); },
                   {param({2, 1, 3}, 1), param({4, 1}, 2)});
}
TEST(Gradcheck, SubBroadcast) {
  expect_gradcheck([](const Inputs& x) { return sub(x[0], x[1]); },
                   {param({3, 4}, 1), param({4}, 2)});
}
TEST(Gradcheck, MulBroadcast) {
  expect_gradcheck([](const Inputs& x) { return mul(x[0], x[1]); },
                   {param({3, 4}, 1), param({3, 1}, 2)});
}
TEST(Gradcheck, DivBroadcast) {
  expect_gradcheck([](const Inputs& x) { return div(x[0], x[1]); },
                   {param({3, 4}, 1), positive_param({4}, 2)});
}
TEST(Gradcheck, ScalarOps) {
  expect_gradcheck([](const Inputs& x) { return (x[0] * 3.0 + 1.5) / 2.0 - 0.25; },
                   {param({5}, 3)});
}
TEST(Gradcheck, Neg) {
  expect_gradcheck([](const Inputs& x) { return neg(x[0]); }, {param({4}, 4)});
}
TEST(Gradcheck, Exp) {
  expect_gradcheck([](const Inputs& x) { return exp(x[0]); }, {param({2, 3}, 5)});
}
TEST(Gradcheck, Log) {
  expect_gradcheck([](const Inputs& x) { return log(x[0]); }, {positive_param({2, 3}, 6)});
}
TEST(Gradcheck, Sqrt) {
  expect_gradcheck([](const Inputs& x) { return sqrt(x[0]); }, {positive_param({6}, 7)});
}
TEST(Gradcheck, Pow) {
  expect_gradcheck([](const Inputs& x) { return pow(x[0], 2.5); }, {positive_param({6}, 8)});
}
TEST(Gradcheck, Tanh) {
  expect_gradcheck([](const Inputs& x) { return tanh(x[0]); }, {param({2, 3}, 9)});
}
TEST(Gradcheck, Sigmoid) {
  expect_gradcheck([](const Inputs& x) { return sigmoid(x[0]); }, {param({2, 3}, 10)});
}
TEST(Gradcheck, RelativePositionGatherByQuery) {
  expect_gradcheck([](const Inputs& x) { return relative_position_gather(x[0], false); },
                   {param({2, 3, 4, 7}, 31)});
}
TEST(Gradcheck, RelativePositionGatherByKey) {
  expect_gradcheck([](const Inputs& x) { return relative_position_gather(x[0], true); },
                   {param({2, 3, 4, 7}, 32)});
}
TEST(Gradcheck, Relu) {
  // Keep inputs away from the kink at 0, where the derivative is not defined.
  Tensor x = from_vector<double>({-2.0, -0.5, 0.3, 1.7, -1.1, 0.9}, {2, 3});
  x.set_requires_grad(true);
  expect_gradcheck([](const Inputs& x) { return relu(x[0]); }, {x});
}
TEST(Gradcheck, GeluExactErf) {
  expect_gradcheck([](const Inputs& x) { return gelu(x[0], GeluApproximation::none); },
                   {param({3, 4}, 11)});
}
TEST(Gradcheck, GeluTanhApproximation) {
  expect_gradcheck([](const Inputs& x) { return gelu(x[0], GeluApproximation::tanh); },
                   {param({3, 4}, 12)});
}
TEST(Gradcheck, SumAll) {
  expect_gradcheck([](const Inputs& x) { return sum(x[0]); }, {param({2, 3, 4}, 13)});
}
TEST(Gradcheck, SumDims) {
  expect_gradcheck([](const Inputs& x) { return sum(x[0], {0, 2}); }, {param({2, 3, 4}, 14)});
}
TEST(Gradcheck, SumDimKeepdim) {
  expect_gradcheck([](const Inputs& x) { return sum(x[0], {-1}, true); }, {param({2, 3, 4}, 15)});
}
TEST(Gradcheck, MeanAll) {
  expect_gradcheck([](const Inputs& x) { return mean(x[0]); }, {param({3, 4}, 16)});
}
TEST(Gradcheck, MeanDims) {
  expect_gradcheck([](const Inputs& x) { return mean(x[0], {1}); }, {param({3, 4, 2}, 17)});
}
TEST(Gradcheck, Matmul2D) {
  expect_gradcheck([](const Inputs& x) { return matmul(x[0], x[1]); },
                   {param({3, 4}, 18), param({4, 5}, 19)});
}
TEST(Gradcheck, MatmulBatched) {
  expect_gradcheck([](const Inputs& x) { return matmul(x[0], x[1]); },
                   {param({2, 3, 4}, 20), param({2, 4, 2}, 21)});
}
TEST(Gradcheck, MatmulBroadcastSecondOperand) {
  expect_gradcheck([](const Inputs& x) { return matmul(x[0], x[1]); },
                   {param({2, 3, 4}, 22), param({4, 2}, 23)});
}
TEST(Gradcheck, MatmulTransposedOperands) {
  expect_gradcheck(
      [](const Inputs& x) { return matmul(x[0].transpose(0, 1), x[1].transpose(0, 1)); },
      {param({4, 3}, 24), param({2, 4}, 25)});
}
TEST(Gradcheck, Matmul4DAttentionLayout) {
  // [B, T, h, d] permuted to [B, h, T, d]: a strided batched product, as attention does.
  expect_gradcheck(
      [](const Inputs& x) {
        Tensor q = x[0].permute({0, 2, 1, 3}), k = x[1].permute({0, 2, 3, 1});
        return matmul(q, k);
      },
      {param({2, 3, 2, 2}, 26), param({2, 3, 2, 2}, 27)});
}
TEST(Gradcheck, Linear) {
  expect_gradcheck([](const Inputs& x) { return linear(x[0], x[1], x[2]); },
                   {param({2, 3, 4}, 28), param({5, 4}, 29), param({5}, 30)});
}
TEST(Gradcheck, LinearWithoutBias) {
  expect_gradcheck([](const Inputs& x) { return linear(x[0], x[1]); },
                   {param({3, 4}, 31), param({2, 4}, 32)});
}
TEST(Gradcheck, Embedding) {
  Tensor ids = from_vector<int64_t>({1, 3, 0, 3, 2, 1}, {2, 3});
  expect_gradcheck([ids](const Inputs& x) { return embedding(x[0], ids); }, {param({4, 3}, 33)});
}
TEST(Gradcheck, EmbeddingWithPaddingRow) {
  Tensor ids = from_vector<int64_t>({1, 0, 0, 3}, {4});
  // The padding row (0) takes part in the forward pass but gets no gradient; gradcheck
  // would see its numeric derivative, so check the rows that learn and the padding row apart.
  Tensor w = param({4, 2}, 34);
  Tensor out = embedding(w, ids, /*padding_idx=*/0);
  sum(mul(out, out)).backward();
  std::vector<double> g = w.grad().to_vector<double>();
  EXPECT_EQ(g[0], 0.0);
  EXPECT_EQ(g[1], 0.0);
  Tensor learned_ids = from_vector<int64_t>({1, 3, 3}, {3});
  expect_gradcheck([learned_ids](const Inputs& x) { return embedding(x[0], learned_ids, 0); },
                   {param({4, 2}, 35)});
}
TEST(Gradcheck, LayerNorm) {
  expect_gradcheck([](const Inputs& x) { return layer_norm(x[0], x[1], x[2], 1e-5); },
                   {param({2, 3, 5}, 36), param({5}, 37), param({5}, 38)});
}
TEST(Gradcheck, SoftmaxLastDim) {
  expect_gradcheck([](const Inputs& x) { return softmax(x[0], -1); }, {param({3, 4}, 39)});
}
TEST(Gradcheck, SoftmaxInnerDim) {
  expect_gradcheck([](const Inputs& x) { return softmax(x[0], 1); }, {param({2, 3, 2}, 40)});
}
TEST(Gradcheck, LogSoftmax) {
  expect_gradcheck([](const Inputs& x) { return log_softmax(x[0], -1); }, {param({3, 4}, 41)});
}
TEST(Gradcheck, AttentionSoftmaxScaled) {
  expect_gradcheck([](const Inputs& x) { return attention_softmax(x[0], 0.5); },
                   {param({2, 3, 4}, 42)});
}
TEST(Gradcheck, AttentionSoftmaxAdditiveMask) {
  Tensor mask = from_vector<double>({0, 0, -1e9, 0, 0, 0, 0, -1e9}, {2, 1, 4});
  expect_gradcheck([mask](const Inputs& x) { return attention_softmax(x[0], 0.7, mask); },
                   {param({2, 3, 4}, 43)});
}
TEST(Gradcheck, AttentionSoftmaxBoolMaskAndCausal) {
  Tensor keep = from_vector<uint8_t>({1, 1, 1, 0}, {1, 1, 4});
  expect_gradcheck([keep](const Inputs& x) { return attention_softmax(x[0], 0.5, keep, true); },
                   {param({2, 4, 4}, 44)});
}
TEST(Gradcheck, DropoutFixedSeed) {
  expect_gradcheck(
      [](const Inputs& x) {
        Generator g(7);
        return dropout(x[0], 0.3, true, g);
      },
      {param({4, 5}, 45)});
}
TEST(Gradcheck, AttentionSoftmaxDropoutFixedSeed) {
  Tensor keep = from_vector<uint8_t>({1, 1, 1, 0}, {1, 1, 4});
  expect_gradcheck(
      [keep](const Inputs& x) {
        Generator g(8);
        return attention_softmax_dropout(x[0], 0.5, keep, true, 0.3, g);
      },
      {param({2, 4, 4}, 47)});
}
TEST(Gradcheck, AttentionDropoutValuesFixedSeed) {
  Tensor keep = from_vector<uint8_t>({1, 1, 1, 0}, {1, 1, 4});
  expect_gradcheck(
      [keep](const Inputs& x) {
        Generator g(8);
        return attention_dropout_values(x[0], x[1], 0.5, keep, true, 0.3, g);
      },
      {param({2, 4, 4}, 47), param({2, 4, 3}, 49)});
}
TEST(Gradcheck, AttentionDropoutValuesPickedQueriesFixedSeed) {
  // Queries 3 and 1 of the first sequence of 4, and the second sequence's query 2 twice.
  const QueryRows rows{from_vector<int64_t>({3, 1, 2, 2}, {2, 2}), 4};
  expect_gradcheck(
      [rows](const Inputs& x) {
        Generator g(8);
        return attention_dropout_values(x[0], x[1], 0.5, Tensor(), false, 0.3, g, nullptr, &rows);
      },
      {param({2, 1, 2, 5}, 57), param({2, 1, 5, 3}, 58)});
}
TEST(Gradcheck, SelfAttentionQkvFixedSeed) {
  // Two heads of 3 over 4 positions; the second sequence's last key padded away.
  Tensor keep = from_vector<uint8_t>({1, 1, 1, 1, 1, 1, 1, 0}, {2, 1, 1, 4});
  for (double p : {0.0, 0.3}) {
    for (bool causal : {false, true}) {
      expect_gradcheck(
          [keep, p, causal](const Inputs& x) {
            Generator g(8);
            return self_attention_qkv(x[0], 2, keep, causal, p, &g);
          },
          {param({2, 4, 18}, 56)});
    }
  }
}
TEST(Gradcheck, LinearGelu) {
  for (GeluApproximation approximation : {GeluApproximation::none, GeluApproximation::tanh}) {
    expect_gradcheck(
        [approximation](const Inputs& x) { return linear_gelu(x[0], x[1], x[2], approximation); },
        {param({2, 3, 4}, 50), param({5, 4}, 51), param({5}, 52)});
    expect_gradcheck(
        [approximation](const Inputs& x) {
          return linear_gelu(x[0], x[1], x[2], approximation, WeightLayout::in_out);
        },
        {param({3, 4}, 53), param({4, 5}, 54), param({5}, 55)});
  }
}
TEST(Gradcheck, CrossEntropy) {
  Tensor t = from_vector<int64_t>({2, 0, 1}, {3});
  expect_gradcheck([t](const Inputs& x) { return cross_entropy(x[0], t); }, {param({3, 4}, 46)});
}
TEST(Gradcheck, CrossEntropyIgnoreIndex) {
  Tensor t = from_vector<int64_t>({2, -100, 1, -100}, {4});
  expect_gradcheck([t](const Inputs& x) { return cross_entropy(x[0], t); }, {param({4, 3}, 47)});
}
TEST(Gradcheck, CrossEntropyLabelSmoothing) {
  Tensor t = from_vector<int64_t>({2, 0, -100}, {3});
  expect_gradcheck([t](const Inputs& x) { return cross_entropy(x[0], t, -100, 0.1); },
                   {param({3, 4}, 48)});
}
TEST(Gradcheck, ReshapeTransposePermute) {
  expect_gradcheck(
      [](const Inputs& x) {
        return mul(x[0].reshape({3, 2, 2}).permute({2, 0, 1}).transpose(0, 2), 2.0);
      },
      {param({4, 3}, 49)});
}
TEST(Gradcheck, ReshapeOfNonContiguous) {
  expect_gradcheck([](const Inputs& x) { return x[0].transpose(0, 1).reshape({-1}); },
                   {param({3, 4}, 50)});
}
TEST(Gradcheck, SlicesOfOneTensorSumTheirGradientsInOneBuffer) {
  // Three column blocks (as q, k, v of a fused projection), an overlapping slice, a strided
  // slice and a whole-tensor use: the engine adds each slice's gradient into the pending one
  // in place, whatever order they arrive in.
  expect_gradcheck(
      [](const Inputs& x) {
        const Tensor& t = x[0];
        Tensor q = t.slice(1, 0, 2), k = t.slice(1, 2, 4), v = t.slice(1, 4, 6);
        Tensor out = add(mul(q, k), mul(v, t.slice(1, 1, 3)));
        out = add(add(out, t.slice(1, 0, 6, 3)), t.slice(1, 3, 5));
        return add(out, sum(mul(t, t)));
      },
      {param({3, 6}, 52)});
}
TEST(Gradcheck, SliceWithStep) {
  expect_gradcheck([](const Inputs& x) { return x[0].slice(1, 1, 5, 2); }, {param({3, 5}, 51)});
}
TEST(Gradcheck, Select) {
  expect_gradcheck([](const Inputs& x) { return x[0].select(0, -1); }, {param({3, 4}, 52)});
}
TEST(Gradcheck, UnsqueezeSqueezeExpand) {
  expect_gradcheck(
      [](const Inputs& x) {
        return expand(x[0].unsqueeze(0), {3, 4}).squeeze(0) * 1.0;
      },
      {param({4}, 53)});
}
TEST(Gradcheck, Concat) {
  expect_gradcheck(
      [](const Inputs& x) {
        return concat({x[0], x[1]}, 1);
      },
      {param({2, 3}, 54), param({2, 2}, 55)});
}
TEST(Gradcheck, Split) {
  expect_gradcheck(
      [](const Inputs& x) {
        auto parts = split(x[0], {1, 3}, 1);
        return mul(parts[0], sum(parts[1], {1}, true));
      },
      {param({2, 4}, 56)});
}
TEST(Gradcheck, ContiguousAndClone) {
  expect_gradcheck([](const Inputs& x) { return x[0].transpose(0, 1).contiguous().clone(); },
                   {param({2, 3}, 57)});
}
