// Forward values of the ops, and the f32 fast path against the f64 reference path.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "autograd/allocator.h"
#include "autograd/grad_mode.h"
#include "autograd/kernels/philox_blocks.h"
#include "autograd/ops.h"
#include "autograd/random.h"
#include "support/test_util.h"

using namespace heed;
using heed::testing::max_relative_error;

namespace {
Tensor rand32(const Shape& s, uint64_t seed) {
  Generator g(seed);
  return randn(s, g);
}
}  // namespace

TEST(Ops, GeluMatchesClosedForms) {
  Tensor x = from_vector<double>({-1.0, 0.0, 0.5, 2.0}, {4});
  std::vector<double> exact = gelu(x).to_vector<double>();
  std::vector<double> approx = gelu(x, GeluApproximation::tanh).to_vector<double>();
  for (size_t i = 0; i < exact.size(); ++i) {
    const double v = x.to_vector<double>()[i];
    EXPECT_NEAR(exact[i], 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))), 1e-15);
    EXPECT_NEAR(approx[i],
                0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v))), 1e-15);
  }
}

TEST(Ops, FastGeluGradientsMatchF64Reference) {
  // The f32 backward uses fast::erf and fast::tanh; the f64 one libm.
  for (GeluApproximation form : {GeluApproximation::none, GeluApproximation::tanh}) {
    Tensor x32 = rand32({7, 129}, 12) * 3.0;
    Tensor x64 = x32.to(DType::f64);
    x32.set_requires_grad(true);
    x64.set_requires_grad(true);
    sum(gelu(x32, form)).backward();
    sum(gelu(x64, form)).backward();
    EXPECT_LT(max_relative_error(x32.grad(), x64.grad()), 1e-6);
  }
}

TEST(Ops, GeluWithBf16ProductsKeepsItsInputInBf16ForBackward) {
  // With bf16 products GELU keeps its input rounded to bf16 for backward: the forward is the
  // f32 one exactly, and the gradient is the f64 derivative at the rounded input.
  for (GeluApproximation form : {GeluApproximation::none, GeluApproximation::tanh}) {
    Tensor x = rand32({7, 129}, 14) * 3.0;
    Tensor weights = rand32({7, 129}, 15);
    Tensor plain = gelu(x, form);
    x.set_requires_grad(true);
    Tensor rounded64 = x.detach().to(DType::bf16).to(DType::f64);
    rounded64.set_requires_grad(true);
    {
      heed::testing::MatmulPrecisionScope bf16_products(MatmulPrecision::bf16);
      Tensor y = gelu(x, form);
      EXPECT_EQ(y.to_vector<float>(), plain.to_vector<float>());
      sum(mul(y, weights)).backward();
    }
    sum(mul(gelu(rounded64, form), weights.to(DType::f64))).backward();
    EXPECT_LT(max_relative_error(x.grad(), rounded64.grad()), 1e-6);
  }
}

TEST(Ops, FastExpBackwardsMatchF64Reference) {
  // Cross-entropy (smoothed, with an ignored row) and log-softmax backward on the f32 path
  // use the fast exp. Logits spread over ±60 and one column at -200 reach past the exp's
  // flush to 0 at e^-87.
  Tensor x32 = rand32({6, 40}, 13) * 20.0;
  std::vector<float> v = x32.to_vector<float>();
  for (int64_t r = 0; r < 6; ++r) v[r * 40 + 3] = -200.0f;
  x32 = from_vector<float>(v, {6, 40});
  Tensor x64 = x32.to(DType::f64);
  x32.set_requires_grad(true);
  x64.set_requires_grad(true);
  Tensor t = from_vector<int64_t>({1, 0, 39, 5, -100, 3}, {6});
  cross_entropy(x32, t, -100, 0.1).backward();
  cross_entropy(x64, t, -100, 0.1).backward();
  EXPECT_LT(max_relative_error(x32.grad(), x64.grad()), 1e-6);

  Tensor y32 = x32.detach(), y64 = x64.detach();
  y32.set_requires_grad(true);
  y64.set_requires_grad(true);
  Tensor w = rand32({6, 40}, 14);  // a weighted sum, so the upstream gradient is not uniform
  sum(mul(log_softmax(y32, -1), w)).backward();
  sum(mul(log_softmax(y64, -1), w.to(DType::f64))).backward();
  // f32 log-probabilities of logits near ±60 are exact only to half an ulp of 64 (3.8e-6),
  // an error the backward scales by the row's upstream sum: a looser bound than above.
  EXPECT_LT(max_relative_error(y32.grad(), y64.grad()), 1e-5);
}

TEST(Ops, SoftmaxRowsSumToOneAndLogSoftmaxAgrees) {
  Tensor x = rand32({5, 7}, 1);
  Tensor s = softmax(x, -1);
  std::vector<float> sums = sum(s, {1}).to_vector<float>();
  for (float v : sums) EXPECT_NEAR(v, 1.0f, 1e-6);
  EXPECT_LT(max_relative_error(exp(log_softmax(x, -1)), s), 1e-6);
}

TEST(Ops, LayerNormNormalisesRows) {
  Tensor x = rand32({4, 64}, 2) * 3.0 + 1.0;
  Tensor y = layer_norm(x, ones({64}), zeros({64}), 1e-5);
  for (float m : mean(y, {1}).to_vector<float>()) EXPECT_NEAR(m, 0.0f, 1e-5);
  for (float v : mean(mul(y, y), {1}).to_vector<float>()) EXPECT_NEAR(v, 1.0f, 1e-3);
}

namespace {
// LayerNorm's gradients of sum(layer_norm(x, w, b) * gy) for x, w and b, in x's type.
std::vector<Tensor> layer_norm_gradients(Tensor x, Tensor w, Tensor b, const Tensor& gy) {
  for (Tensor* t : {&x, &w, &b}) *t = t->detach().set_requires_grad(true);
  sum(mul(layer_norm(x, w, b, 1e-5), gy)).backward();
  return {x.grad(), w.grad(), b.grad()};
}
}  // namespace

// The f32 backward (kernels/layer_norm_rows.h, the parameters' sums in fixed row blocks) against
// the f64 reference: a row shorter than the 16 partial sums, a row with a tail past them, more
// rows than blocks and a row count the blocks do not divide.
TEST(Ops, LayerNormF32GradientsMatchF64Reference) {
  auto f64 = [](const Tensor& t) { return t.to(DType::f64); };
  for (auto [rows, width] : {std::pair<int64_t, int64_t>{5, 7}, {37, 33}, {203, 256}}) {
    SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(width));
    Tensor x = rand32({rows, width}, 21) * 2.0 + 0.5, w = rand32({width}, 22);
    Tensor b = rand32({width}, 23), gy = rand32({rows, width}, 24);
    std::vector<Tensor> fast = layer_norm_gradients(x, w, b, gy);
    std::vector<Tensor> exact = layer_norm_gradients(f64(x), f64(w), f64(b), f64(gy));
    for (size_t i = 0; i < fast.size(); ++i) {
      ASSERT_EQ(fast[i].dtype(), DType::f32);
      EXPECT_LT(max_relative_error(fast[i], exact[i]), 1e-5) << "gradient " << i;
    }
  }
}

// The weight and bias gradients sum over rows in fixed blocks: the same bits on one thread as
// on two.
TEST(Ops, LayerNormParameterGradientsDoNotDependOnTheThreadCount) {
  // Enough rows that the backward's 16 blocks run on two threads (kParallelGrain).
  Tensor x = rand32({1024, 64}, 25), w = rand32({64}, 26), b = rand32({64}, 27);
  Tensor gy = rand32({1024, 64}, 28);
  const int threads = num_threads();
  set_num_threads(1);
  std::vector<Tensor> one = layer_norm_gradients(x, w, b, gy);
  set_num_threads(2);
  std::vector<Tensor> two = layer_norm_gradients(x, w, b, gy);
  set_num_threads(threads);
  for (size_t i = 0; i < one.size(); ++i) {
    EXPECT_EQ(one[i].to_vector<float>(), two[i].to_vector<float>()) << "gradient " << i;
  }
}

TEST(Ops, FastF32PathMatchesF64Reference) {
  Tensor x = rand32({6, 33}, 3), w = rand32({33}, 4), b = rand32({33}, 5);
  auto f64 = [](const Tensor& t) { return t.to(DType::f64); };
  EXPECT_LT(max_relative_error(layer_norm(x, w, b, 1e-5), layer_norm(f64(x), f64(w), f64(b), 1e-5)),
            1e-5);
  EXPECT_LT(max_relative_error(softmax(x, -1), softmax(f64(x), -1)), 1e-6);
  EXPECT_LT(max_relative_error(gelu(x), gelu(f64(x))), 1e-6);
  EXPECT_LT(
      max_relative_error(gelu(x, GeluApproximation::tanh), gelu(f64(x), GeluApproximation::tanh)),
      1e-6);
  // Keys 2 and 30 masked for every query, with and without the causal cut.
  std::vector<uint8_t> keep(33, 1);
  keep[2] = keep[30] = 0;
  Tensor mask = from_vector<uint8_t>(keep, {1, 1, 33});
  // Besides the padding row and no mask (the wide loops), the masks that take the general
  // loop: a u8 mask broadcast along the keys (query 4 sees nothing) and an additive one.
  Tensor per_query = from_vector<uint8_t>({1, 1, 1, 1, 0, 1}, {1, 6, 1});
  Tensor additive = rand32({1, 1, 33}, 6);
  for (const Tensor& m : {mask, Tensor(), per_query, additive}) {
    // An additive mask has the scores' type.
    const Tensor m64 = m.defined() && m.dtype() == DType::f32 ? f64(m) : m;
    for (bool causal : {false, true}) {
      EXPECT_LT(max_relative_error(attention_softmax(x.reshape({1, 6, 33}), 0.3, m, causal),
                                   attention_softmax(f64(x).reshape({1, 6, 33}), 0.3, m64, causal)),
                1e-6)
          << "mask " << m.shape_str() << ", causal " << causal;
    }
  }
  Tensor t = from_vector<int64_t>({1, 0, 32, 5, -100, 7}, {6});
  EXPECT_LT(max_relative_error(cross_entropy(x, t, -100, 0.1), cross_entropy(f64(x), t, -100, 0.1)),
            1e-6);
}

// Cross-entropy's backward writes its gradient over the logits when nothing else holds them
// (the graph is not retained and no tensor views them): the same gradient, bit for bit, as
// when the logits stay alive, and logits someone holds are never changed.
TEST(Ops, CrossEntropyBackwardReusesTheLogitsOnlyWhenNothingElseHoldsThem) {
  const Tensor t = from_vector<int64_t>({1, 0, 6, -100, 3}, {5});
  Tensor x_free = rand32({5, 7}, 15), x_held = x_free.clone(), x_retained = x_free.clone();
  for (Tensor* x : {&x_free, &x_held, &x_retained}) x->set_requires_grad(true);

  Tensor loss_free;
  {
    const Tensor logits = mul(x_free, 3.0);
    loss_free = cross_entropy(logits, t, -100, 0.1);
  }  // the only handle on the logits is the one backward saved
  auto blocks_taken = [] {
    const AllocatorStats s = allocator_stats();
    return s.os_allocations + s.cache_hits;
  };
  uint64_t before = blocks_taken();
  loss_free.backward();
  const uint64_t taken_free = blocks_taken() - before;

  const Tensor held = mul(x_held, 3.0);
  const std::vector<float> held_before = held.to_vector<float>();
  const Tensor loss_held = cross_entropy(held, t, -100, 0.1);
  before = blocks_taken();
  loss_held.backward();
  const uint64_t taken_held = blocks_taken() - before;
  EXPECT_EQ(taken_free + 1, taken_held);  // the gradient's buffer: the logits' own
  EXPECT_EQ(held.to_vector<float>(), held_before);
  EXPECT_EQ(x_free.grad().to_vector<float>(), x_held.grad().to_vector<float>());

  // A retained graph runs backward twice over the same saved logits.
  Tensor loss_retained;
  {
    const Tensor logits = mul(x_retained, 3.0);
    loss_retained = cross_entropy(logits, t, -100, 0.1);
  }
  loss_retained.backward(Tensor(), /*retain_graph=*/true);
  loss_retained.backward();
  EXPECT_EQ(x_retained.grad().to_vector<float>(), mul(x_held.grad(), 2.0).to_vector<float>());
}

TEST(Ops, CrossEntropyMatchesHandComputedValue) {
  // logits [[1, 2, 3], [1, 1, 1]], targets [2, 0]:
  // row 0: lse = 3 + log(1 + e^-1 + e^-2) = 3.40760596; nll = 0.40760596
  // row 1: nll = log 3 = 1.09861229
  Tensor x = from_vector<double>({1, 2, 3, 1, 1, 1}, {2, 3});
  Tensor t = from_vector<int64_t>({2, 0}, {2});
  EXPECT_NEAR(cross_entropy(x, t).item(), (0.40760596 + 1.09861229) / 2, 1e-8);
  Tensor ignored = from_vector<int64_t>({2, -100}, {2});
  EXPECT_NEAR(cross_entropy(x, ignored).item(), 0.40760596, 1e-8);
  // Label smoothing 0.1 on row 0: mean over classes of -log p = lse - mean(x) = 1.40760596,
  // so 0.9 * 0.40760596 + 0.1 * 1.40760596.
  EXPECT_NEAR(cross_entropy(x, ignored, -100, 0.1).item(), 0.50760596, 1e-8);
  EXPECT_TRUE(std::isnan(cross_entropy(x, from_vector<int64_t>({-100, -100}, {2})).item()));
}

TEST(Ops, AttentionSoftmaxCausalAndMaskSemantics) {
  Tensor scores = zeros({1, 3, 3}, DType::f64);
  std::vector<double> causal = attention_softmax(scores, 1.0, Tensor(), true).to_vector<double>();
  const std::vector<double> expected{1, 0, 0, 0.5, 0.5, 0, 1.0 / 3, 1.0 / 3, 1.0 / 3};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(causal[i], expected[i], 1e-15);
  // A padding mask removes key 2 for every query; a row with nothing left attends nowhere.
  Tensor keep = from_vector<uint8_t>({1, 1, 0}, {1, 1, 3});
  std::vector<double> masked = attention_softmax(scores, 1.0, keep).to_vector<double>();
  EXPECT_NEAR(masked[0], 0.5, 1e-15);
  EXPECT_EQ(masked[2], 0.0);
  Tensor none = from_vector<uint8_t>({0, 0, 0}, {1, 1, 3});
  for (double v : attention_softmax(scores, 1.0, none).to_vector<double>()) EXPECT_EQ(v, 0.0);
}

TEST(Ops, DropoutDropsTheRightShareAndScalesTheRest) {
  Generator g(99);
  Tensor x = ones({100000});
  std::vector<float> y = dropout(x, 0.25, true, g).to_vector<float>();
  int64_t zeros_seen = 0;
  for (float v : y) {
    if (v == 0.0f) {
      ++zeros_seen;
    } else {
      EXPECT_FLOAT_EQ(v, 1.0f / 0.75f);
    }
  }
  // Binomial(100000, 0.25): standard deviation 137; allow 5 of them.
  EXPECT_NEAR(zeros_seen, 25000, 5 * 137);
  EXPECT_EQ(dropout(x, 0.25, false, g).storage(), x.storage());  // identity in eval
  // Within 2^-17 of 1 the threshold rounds to 65,536, above every 16-bit draw: all dropped.
  for (float v : dropout(x, 1.0 - 1e-6, true, g).to_vector<float>()) ASSERT_EQ(v, 0.0f);
}

TEST(Ops, DropoutKeepsExactlyTheElementsWhosePhiloxDrawClearsP) {
  // The definition, element by element: element i of a dropout call that reserved Philox
  // blocks from `offset` takes 16-bit half i % 2 (low first) of word (i / 2) % 4 of block
  // offset + i / 8, and is kept iff that draw is >= round(p * 65536). Covers a length that is
  // not a multiple of 8 and spans several of the kernel's tasks; the gradient uses the same
  // mask.
  Generator g(11);
  g.reserve_blocks(3);  // start at a non-zero offset
  const uint64_t offset = g.state().offset;
  const int64_t n = 9001;
  const double p = 0.3;
  Tensor x = ones({n});
  x.set_requires_grad(true);
  Tensor y = dropout(x, p, true, g);
  sum(y).backward();
  const std::vector<float> values = y.to_vector<float>(), grads = x.grad().to_vector<float>();
  const uint32_t threshold = 19661;  // round(0.3 * 65536)
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t word = philox4x32(g.seed(), offset + i / 8)[(i / 2) % 4];
    const uint32_t draw = (word >> (16 * (i % 2))) & 0xFFFF;
    ASSERT_EQ(values[i] != 0.0f, draw >= threshold) << "element " << i;
    ASSERT_EQ(grads[i], values[i]) << "element " << i;
  }
}

TEST(Ops, FusedAttentionSoftmaxDropoutIsSoftmaxThenDropout) {
  // Same generator state, same elements dropped; the gradients agree too. Rows of 5 keys go
  // many to a Philox call, 37 straddle Philox blocks, 1,030 fill a group alone, and 4,100 are
  // longer than one call's draws; a padding mask and the causal cut remove keys; f32 and f64.
  for (const int64_t tk : {int64_t{5}, int64_t{37}, int64_t{1030}, int64_t{4100}}) {
    std::vector<uint8_t> keep(tk, 1);
    keep[3] = keep[tk / 2] = 0;
    Tensor mask = from_vector<uint8_t>(keep, {1, 1, 1, tk});
    const Shape shape = tk > 100 ? Shape{1, 2, 3, tk} : Shape{2, 3, tk, tk};
    for (DType dtype : {DType::f32, DType::f64}) {
      for (bool causal : {false, true}) {
        SCOPED_TRACE(::testing::Message()
                     << tk << " keys, " << dtype_name(dtype) << ", causal " << causal);
        Tensor x1 = rand32(shape, 31).to(dtype), x2 = x1.clone();
        x1.set_requires_grad(true);
        x2.set_requires_grad(true);
        Generator g1(5), g2(5);
        g1.reserve_blocks(7);
        g2.reserve_blocks(7);
        Tensor probs;
        Tensor fused = attention_softmax_dropout(x1, 0.4, mask, causal, 0.2, g1, &probs);
        Tensor unfused = dropout(attention_softmax(x2, 0.4, mask, causal), 0.2, true, g2);
        EXPECT_EQ(g1.state().offset, g2.state().offset);
        EXPECT_LT(max_relative_error(fused, unfused), 1e-6);
        EXPECT_LT(max_relative_error(probs, attention_softmax(x2, 0.4, mask, causal)), 1e-6);
        Tensor weights = rand32(shape, 32).to(dtype);
        sum(mul(fused, weights)).backward();
        sum(mul(unfused, weights)).backward();
        EXPECT_LT(max_relative_error(x1.grad(), x2.grad()), 1e-5);
      }
    }
  }
}

TEST(Ops, PhiloxBlocksEqualsOneCounterAtATime) {
  using Blocks = void (*)(uint64_t, uint64_t, int64_t, uint32_t*);
  std::vector<std::pair<const char*, Blocks>> builds = {{"dispatched", &philox4x32_blocks}};
  if (__builtin_cpu_supports("avx512f")) builds.emplace_back("avx512", &philox4x32_blocks_avx512);
  if (__builtin_cpu_supports("avx2")) builds.emplace_back("avx2", &philox4x32_blocks_avx2);
  const uint64_t seed = 0xfedc'ba98'1234'5678ULL;
  // Lengths around the vector widths (8, 16), and first counters whose low word wraps
  // inside a vector (the high word must carry) or whose high word is already set.
  for (const auto& [name, blocks] : builds) {
    for (const uint64_t first :
         {uint64_t{0}, (uint64_t{1} << 32) - 5, (uint64_t{7} << 32) - 13, ~uint64_t{0} - 20}) {
      for (const int64_t n : {int64_t{1}, int64_t{7}, int64_t{8}, int64_t{15}, int64_t{16},
                              int64_t{37}, int64_t{64}}) {
        std::vector<uint32_t> batch(4 * n + 1, 0xdeadbeef);
        blocks(seed, first, n, batch.data());
        for (int64_t b = 0; b < n; ++b) {
          const auto one = philox4x32(seed, first + static_cast<uint64_t>(b));
          for (int lane = 0; lane < 4; ++lane) {
            ASSERT_EQ(batch[4 * b + lane], one[lane])
                << name << " first " << first << " n " << n << " block " << b << " word " << lane;
          }
        }
        EXPECT_EQ(batch[4 * n], 0xdeadbeef) << name << ": wrote past the last block";
      }
    }
  }
}

TEST(Ops, DropoutIsReproducibleFromTheSeed) {
  Generator g1(5), g2(5);
  Tensor x = rand32({1000}, 6);
  EXPECT_EQ(dropout(x, 0.1, true, g1).to_vector<float>(),
            dropout(x, 0.1, true, g2).to_vector<float>());
}

TEST(Ops, ArgmaxAlongEachDim) {
  Tensor x = from_vector<float>({1, 5, 2, 7, 0, 3}, {2, 3});
  EXPECT_EQ(argmax(x, 1).to_vector<int64_t>(), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(argmax(x, 0).to_vector<int64_t>(), (std::vector<int64_t>{1, 0, 1}));
}

TEST(Ops, SumToUndoesBroadcasting) {
  Tensor g = ones({2, 3, 4});
  EXPECT_EQ(sum_to(g, {3, 1}).to_vector<float>(), (std::vector<float>{8, 8, 8}));
  EXPECT_EQ(sum_to(g, {4}).to_vector<float>(), (std::vector<float>{6, 6, 6, 6}));
}

TEST(Ops, SumOverLeadingDimsAddsEachColumnInOrderInDouble) {
  // Summing whole rows (contiguous input, leading dims) and one strided column per output (the
  // general loop, here on a transposed copy's view) must both add each output's elements in
  // index order in double: compare with that sum written out. 40 x 2,000 splits over threads
  // and into column blocks with a partial last one.
  for (const Shape& shape : {Shape{40, 2000}, Shape{5, 4, 3, 10}, Shape{7, 3}}) {
    SCOPED_TRACE(shape_str(shape));
    Tensor x = rand32(shape, 91);
    const int64_t inner = shape.back() * (shape.size() == 4 ? shape[2] : 1);
    const int64_t outer = x.numel() / inner;
    std::vector<float> v = x.to_vector<float>(), expected(static_cast<size_t>(inner));
    for (int64_t j = 0; j < inner; ++j) {
      double acc = 0.0;
      for (int64_t r = 0; r < outer; ++r) acc += v[static_cast<size_t>(r * inner + j)];
      expected[static_cast<size_t>(j)] = static_cast<float>(acc);
    }
    const Shape kept(shape.end() - (shape.size() == 4 ? 2 : 1), shape.end());
    EXPECT_EQ(sum_to(x, kept).to_vector<float>(), expected);
    // The same sums through the general loop: the leading dims last in memory.
    Tensor moved = x.reshape({outer, inner}).transpose(0, 1).contiguous().transpose(0, 1);
    ASSERT_FALSE(moved.is_contiguous());
    EXPECT_EQ(sum_to(moved, {inner}).to_vector<float>(), expected);
  }
}

// The comparisons the tests bound: a NaN on one side is an error no bound accepts.
TEST(TestSupport, ANaNErrorFailsEveryBound) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor with_nan = from_vector<double>({1.0, nan, 3.0}, {3});
  Tensor finite = from_vector<double>({1.0, 2.0, 3.0}, {3});
  EXPECT_FALSE(max_relative_error(with_nan, finite) < 1e30);
  EXPECT_FALSE(max_relative_error(finite, with_nan) < 1e30);
  EXPECT_EQ(max_relative_error(with_nan, with_nan), 0.0);  // NaN where NaN is expected
  EXPECT_TRUE(std::isnan(heed::testing::worse_of(0.5, nan)));
  EXPECT_TRUE(std::isnan(heed::testing::worse_of(nan, 0.5)));
  EXPECT_EQ(heed::testing::worse_of(0.5, 0.25), 0.5);
}
