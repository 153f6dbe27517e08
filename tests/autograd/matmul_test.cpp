// The oneDNN path against the reference kernel: f32 within 1e-5 relative, every transpose
// combination, batched, broadcast, with bias; bf16 within bf16's precision.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <dnnl.hpp>
#include <utility>

#include "autograd/grad_mode.h"
#include "autograd/kernels/matmul_reference.h"
#include "autograd/kernels/onednn_matmul.h"
#include "autograd/ops.h"
#include "autograd/random.h"
#include "support/test_util.h"

using namespace heed;
using heed::testing::expect_same_bits;
using heed::testing::max_relative_error;

namespace {

// The reference product of the same operands (any strides), computed in double.
Tensor reference(const Tensor& a, const Tensor& b, const Tensor& bias = Tensor()) {
  Tensor a64 = a.to(DType::f64), b64 = b.to(DType::f64);
  Shape out_shape = broadcast_shapes(Shape(a.shape().begin(), a.shape().end() - 2),
                                     Shape(b.shape().begin(), b.shape().end() - 2), "test");
  out_shape.push_back(a.size(-2));
  out_shape.push_back(b.size(-1));
  const int64_t nd = static_cast<int64_t>(out_shape.size());
  auto lead = [&](Tensor t) {
    while (t.dim() < nd) t = t.unsqueeze(0);
    return t;
  };
  Tensor out = Tensor::empty(out_shape, DType::f64);
  matmul_reference<double>(lead(a64), lead(b64), bias.defined() ? bias.to(DType::f64) : Tensor(),
                           out);
  return out;
}

// |t| elementwise, in f64.
Tensor magnitudes(const Tensor& t) {
  std::vector<double> v = t.to_vector<double>();
  for (double& x : v) x = std::abs(x);
  return from_vector<double>(v, t.shape());
}

Tensor rand(const Shape& s, uint64_t seed) {
  Generator g(seed);
  return randn(s, g);
}

}  // namespace

TEST(Matmul, OneDnnMatchesReferenceForEveryTransposeCombination) {
  const int64_t M = 37, K = 53, N = 29;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      Tensor a = ta ? rand({K, M}, 1).transpose(0, 1) : rand({M, K}, 1);
      Tensor b = tb ? rand({N, K}, 2).transpose(0, 1) : rand({K, N}, 2);
      Tensor c = matmul(a, b);
      EXPECT_LT(max_relative_error(c, reference(a, b)), 1e-5) << "ta=" << ta << " tb=" << tb;
    }
  }
}

TEST(Matmul, BatchedAndStridedAttentionLayoutsMatchReference) {
  // q, k, v as [B, T, h, d] viewed as [B, h, T, d] through strides.
  const int64_t B = 2, T = 9, H = 3, D = 8;
  Tensor q = rand({B, T, H, D}, 3).permute({0, 2, 1, 3});
  Tensor k = rand({B, T, H, D}, 4).permute({0, 2, 3, 1});
  Tensor scores = matmul(q, k);
  EXPECT_EQ(scores.shape(), (Shape{B, H, T, T}));
  EXPECT_LT(max_relative_error(scores, reference(q, k)), 1e-5);
  Tensor a3 = rand({4, 7, 5}, 5), b3 = rand({4, 6, 5}, 6).transpose(1, 2);
  EXPECT_LT(max_relative_error(matmul(a3, b3), reference(a3, b3)), 1e-5);
}

TEST(Matmul, BroadcastBatchMatchesReference) {
  Tensor a = rand({3, 5, 4}, 7), b = rand({4, 6}, 8);
  EXPECT_LT(max_relative_error(matmul(a, b), reference(a, b)), 1e-5);
  Tensor a1 = rand({1, 5, 4}, 9), b3 = rand({3, 4, 6}, 10);
  EXPECT_LT(max_relative_error(matmul(a1, b3), reference(a1, b3)), 1e-5);
}

TEST(Matmul, LinearWithBiasMatchesReference) {
  Tensor x = rand({2, 11, 24}, 11), w = rand({17, 24}, 12), bias = rand({17}, 13);
  Tensor y = linear(x, w, bias);
  Tensor expected = reference(x.reshape({22, 24}), w.transpose(0, 1), bias).reshape({2, 11, 17});
  EXPECT_LT(max_relative_error(y, expected), 1e-5);
}

TEST(Matmul, LinearF32AgreesWithF64ReferencePath) {
  Tensor x = rand({6, 16}, 14), w = rand({8, 16}, 15), bias = rand({8}, 16);
  Tensor fast = linear(x, w, bias);
  Tensor ref = linear(x.to(DType::f64), w.to(DType::f64), bias.to(DType::f64));
  EXPECT_LT(max_relative_error(fast, ref), 1e-5);
}

TEST(Matmul, Bf16InputsAccumulateInF32WithinBf16Precision) {
  const int64_t K = 64;
  Tensor a = rand({16, K}, 17), b = rand({K, 12}, 18);
  Tensor c = matmul(a.to(DType::bf16), b.to(DType::bf16));
  EXPECT_EQ(c.dtype(), DType::f32);
  // Each input carries a relative rounding error up to 2^-8; over K products of N(0,1)
  // values the absolute error is bounded well under sqrt(K) * 2 * 2^-8 * 3.
  const double bound = std::sqrt(static_cast<double>(K)) * 2 * (1.0 / 256) * 3;
  std::vector<double> got = c.to_vector<double>(), want = reference(a, b).to_vector<double>();
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], bound);
  // And exactly the product of the bf16-rounded inputs, up to f32 accumulation.
  Tensor exact = reference(a.to(DType::bf16).to(DType::f32), b.to(DType::bf16).to(DType::f32));
  EXPECT_LT(max_relative_error(c, exact), 1e-5);
}

TEST(Matmul, Bf16PrecisionSwitchRoutesF32ProductsThroughBf16) {
  Tensor a = rand({8, 32}, 19), b = rand({32, 8}, 20);
  Tensor c;
  {
    heed::testing::MatmulPrecisionScope bf16_products(MatmulPrecision::bf16);
    c = matmul(a, b);
  }
  Tensor exact = reference(a.to(DType::bf16).to(DType::f32), b.to(DType::bf16).to(DType::f32));
  EXPECT_LT(max_relative_error(c, exact), 1e-5);
  EXPECT_GT(max_relative_error(c, reference(a, b)), 0.0);  // it really did round
}

TEST(Matmul, Bf16CopyOfAParameterFollowsItsWritesAndItsViews) {
  // A parameter's storage keeps its bf16 copy between writes: a product after an in-place
  // write must see the new values, and a transposed view must read the copy transposed.
  Tensor a = rand({8, 32}, 23), w = rand({8, 32}, 24);
  w.storage()->set_keeps_bf16_copy(true);
  const auto product_of_rounded = [&](const Tensor& x, const Tensor& y) {
    return reference(x.to(DType::bf16).to(DType::f32), y.to(DType::bf16).to(DType::f32));
  };
  Tensor before, after, other_view;
  {
    heed::testing::MatmulPrecisionScope bf16_products(MatmulPrecision::bf16);
    before = matmul(a, w.transpose(0, 1));
    w.add_(ones({8, 32}), 0.5);
    after = matmul(a, w.transpose(0, 1));
    other_view = matmul(w, a.transpose(0, 1));
  }
  EXPECT_GT(max_relative_error(before, after), 1e-2);
  EXPECT_LT(max_relative_error(after, product_of_rounded(a, w.transpose(0, 1))), 1e-5);
  EXPECT_LT(max_relative_error(other_view, product_of_rounded(w, a.transpose(0, 1))), 1e-5);
}

TEST(Matmul, Bf16ProductsStillCatchAnOperandChangedBeforeBackward) {
  // Backward keeps the operands' bf16 copies, yet a change to an operand itself must be
  // caught as it is in f32 (a product from the copy would silently use the old values).
  Tensor a = rand({4, 8}, 25), b = rand({8, 3}, 26);
  a.set_requires_grad(true);
  Tensor x = mul(a, 1.0);  // a non-leaf operand, changed in place below
  Tensor y;
  {
    heed::testing::MatmulPrecisionScope bf16_products(MatmulPrecision::bf16);
    y = sum(matmul(x, b));
  }
  {
    NoGradGuard no_grad;  // as an optimizer's update would write it
    x.add_(ones({4, 8}), 1.0);
  }
  EXPECT_THROW(y.backward(), std::exception);
}

TEST(Matmul, PrimitiveCacheReusesPrimitivesForRepeatedShapes) {
  Tensor a = rand({13, 7}, 21), b = rand({7, 5}, 22);
  matmul(a, b);
  const auto before = matmul_cache_stats();
  for (int i = 0; i < 5; ++i) matmul(a, b);
  const auto after = matmul_cache_stats();
  EXPECT_EQ(after.primitives, before.primitives);
  EXPECT_EQ(after.hits - before.hits, 5u);
}

TEST(Matmul, PrimitiveCacheKeepsTheMostRecentlyUsedAndStillMultipliesAfterDroppingOne) {
  // 1,100 shapes, more than the 1,024 primitives the cache keeps: it stays at 1,024, and a
  // product whose primitive was dropped is built again and still right.
  Tensor b = rand({7, 5}, 23);
  Tensor first = rand({1, 7}, 24);
  const Tensor expected = reference(first, b);
  for (int64_t rows = 1; rows <= 1100; ++rows) matmul(rand({rows, 7}, 25), b);
  const auto full = matmul_cache_stats();
  EXPECT_EQ(full.cached, 1024u);
  EXPECT_GE(full.evicted, 1100u - 1024u);
  EXPECT_LT(max_relative_error(matmul(first, b), expected), 1e-5);
  EXPECT_EQ(matmul_cache_stats().primitives, full.primitives + 1);  // rows = 1 was dropped
}

// A weight that many rows share is first packed into oneDNN's blocked layout
// (kernels/pack_blocked.h). Sizes that pad either blocked dim, plain and transposed b, f32 and
// bf16 (and an f32 b rounded to bf16 as it is packed), with and without a bias: the packed
// product equals the plain one.
TEST(Matmul, PackedWeightsGiveThePlainProducts) {
  const int64_t M = 2048;  // rows enough for packing to pay
  // oneDNN 2.6 reads blocked weights in its AVX-512 kernels; on an AVX2 CPU b stays plain.
  const bool blocked_kernels = dnnl::get_effective_cpu_isa() >= dnnl::cpu_isa::avx512_core;
  struct Types {
    DType a, b;
  };
  std::vector<Types> cases{{DType::f32, DType::f32}};
  if (onednn_bf16_matmul_available()) {
    cases.push_back({DType::bf16, DType::bf16});
    cases.push_back({DType::bf16, DType::f32});
  }
  int padded_runs = 0;  // packed products whose blocks hold padding
  for (const Types& types : cases) {
    for (auto [K, N] :
         {std::pair<int64_t, int64_t>{37, 100}, {64, 512}, {53, 29}, {512, 40}, {256, 1024}}) {
      for (bool tb : {false, true}) {
        for (bool with_bias : {false, true}) {
          Tensor a = rand({M, K}, 30).to(types.a);
          Tensor b =
              tb ? rand({N, K}, 31).to(types.b).transpose(0, 1) : rand({K, N}, 31).to(types.b);
          Tensor bias = with_bias ? rand({N}, 32) : Tensor();
          Tensor packed = Tensor::empty({M, N}, DType::f32);
          Tensor plain = Tensor::empty({M, N}, DType::f32);
          const bool ran = onednn_matmul_packed(a, b, bias, packed);
          // The models' shapes (multiples of 64) must pack; for others oneDNN may pad its
          // blocks differently from the layouts pack_blocked writes (bf16 with K = 37 does),
          // and then the product runs plain.
          if (K % 64 == 0 && N % 64 == 0) {
            EXPECT_EQ(ran, blocked_kernels) << dtype_name(types.a) << " x " << dtype_name(types.b);
          }
          if (!ran) continue;
          padded_runs += K % 16 != 0 || N % 64 != 0;
          onednn_matmul(a, types.a == types.b ? b : b.to(types.a), bias, plain);
          EXPECT_LT(max_relative_error(packed, plain), 1e-5)
              << dtype_name(types.a) << " x " << dtype_name(types.b) << " K=" << K << " N=" << N
              << " tb=" << tb << " bias=" << with_bias;
        }
      }
    }
  }
  if (blocked_kernels) {
    EXPECT_GT(padded_runs, 0);
  }
}

// Packing starts at 2,048 rows, or in bf16 where the products' PackedOperands asks for fewer;
// one row less and nothing runs. A shape that packs (K and N multiples of 64).
TEST(Matmul, PackedProductsStartAtTheirRowBound) {
  // oneDNN 2.6 reads blocked weights in its AVX-512 kernels: on an AVX2 CPU nothing packs.
  if (dnnl::get_effective_cpu_isa() < dnnl::cpu_isa::avx512_core) {
    Tensor out = Tensor::empty({2048, 128}, DType::f32);
    EXPECT_FALSE(onednn_matmul_packed(rand({2048, 64}, 33), rand({64, 128}, 34), Tensor(), out));
    return;
  }
  const auto packs = [](int64_t rows, DType type, int64_t bf16_min_rows) {
    PackedOperands reuse(bf16_min_rows);
    Tensor out = Tensor::empty({rows, 128}, DType::f32);
    return onednn_matmul_packed(rand({rows, 64}, 33).to(type), rand({128, 64}, 34).transpose(0, 1),
                                Tensor(), out, &reuse);
  };
  EXPECT_TRUE(packs(2048, DType::f32, 0));
  EXPECT_FALSE(packs(2047, DType::f32, 0));
  EXPECT_FALSE(packs(512, DType::f32, 512));  // the lower bound is for bf16 products only
  if (onednn_bf16_matmul_available()) {
    EXPECT_TRUE(packs(2048, DType::bf16, 0));
    EXPECT_FALSE(packs(2047, DType::bf16, 0));
    EXPECT_TRUE(packs(512, DType::bf16, 512));
    EXPECT_FALSE(packs(511, DType::bf16, 512));
  }
}

// A PackedOperands serves a later product the copy an earlier one packed, only for the same
// weight, view and layout, unchanged since: the products match packing afresh, bit for bit,
// and it holds one copy per weight, view and version.
TEST(Matmul, PackedOperandsAreReusedOnlyForTheSameUnchangedWeight) {
  const int64_t M = 2048, K = 64, N = 128;
  // oneDNN 2.6 reads blocked weights in its AVX-512 kernels; on an AVX2 CPU nothing is packed,
  // nothing is held, and the caller runs the plain product.
  if (dnnl::get_effective_cpu_isa() < dnnl::cpu_isa::avx512_core) {
    PackedOperands reuse;
    Tensor out = Tensor::empty({M, N}, DType::f32);
    EXPECT_FALSE(onednn_matmul_packed(rand({M, K}, 40), rand({N, K}, 42).transpose(0, 1), Tensor(),
                                      out, &reuse));
    EXPECT_EQ(reuse.copies(), 0u);
    return;
  }
  std::vector<DType> types{DType::f32};
  if (onednn_bf16_matmul_available()) types.push_back(DType::bf16);
  const auto fresh = [](const Tensor& a, const Tensor& b) {
    Tensor out = Tensor::empty({a.size(0), b.size(1)}, DType::f32);
    EXPECT_TRUE(onednn_matmul_packed(a, b, Tensor(), out));
    return out;
  };
  const auto reused = [](const Tensor& a, const Tensor& b, PackedOperands& reuse) {
    Tensor out = Tensor::empty({a.size(0), b.size(1)}, DType::f32);
    EXPECT_TRUE(onednn_matmul_packed(a, b, Tensor(), out, &reuse));
    return out;
  };
  for (DType type : types) {
    SCOPED_TRACE(dtype_name(type));
    Tensor a1 = rand({M, K}, 40).to(type), a2 = rand({M, K}, 41).to(type);
    Tensor w = rand({N, K}, 42);  // an f32 weight [out, in], read as its transpose
    PackedOperands reuse;
    expect_same_bits(reused(a1, w.transpose(0, 1), reuse), fresh(a1, w.transpose(0, 1)),
                     "first product");
    expect_same_bits(reused(a2, w.transpose(0, 1), reuse), fresh(a2, w.transpose(0, 1)),
                     "the same weight again");
    EXPECT_EQ(reuse.copies(), 1u);
    // Another view of the weight (the input gradient's product reads w itself).
    Tensor wide_a = rand({M, N}, 43).to(type);
    expect_same_bits(reused(wide_a, w, reuse), fresh(wide_a, w), "another view");
    EXPECT_EQ(reuse.copies(), 2u);
    // Written in place: packed again, not read from the old copy.
    w.mul_(2.0);
    expect_same_bits(reused(a1, w.transpose(0, 1), reuse), fresh(a1, w.transpose(0, 1)),
                     "the weight after a write");
    EXPECT_EQ(reuse.copies(), 3u);
    // A weight freed after its product, then another made: never served the first one's copy.
    {
      Tensor gone = rand({N, K}, 44);
      reused(a1, gone.transpose(0, 1), reuse);
    }
    Tensor next = rand({N, K}, 45);
    expect_same_bits(reused(a1, next.transpose(0, 1), reuse), fresh(a1, next.transpose(0, 1)),
                     "a weight made after another was freed");
    EXPECT_EQ(reuse.copies(), 5u);
  }
}

TEST(Matmul, LinearWithManyRowsMatchesTheF64PathForwardAndBackward) {
  // 2,048 rows and 2,048 outputs: the forward and both gradient products (the weight
  // gradient's has `out` rows) take the packed path.
  const int64_t rows = 2048, in = 40, out = 2048;
  Tensor r = rand({rows, out}, 33);
  auto run = [&](DType type) {
    Tensor x = rand({rows, in}, 34).to(type), w = rand({out, in}, 35).to(type);
    Tensor bias = rand({out}, 36).to(type);
    for (Tensor* t : {&x, &w, &bias}) t->set_requires_grad(true);
    sum(mul(linear(x, w, bias), r.to(type))).backward();
    return std::vector<Tensor>{x.grad(), w.grad(), bias.grad()};
  };
  const std::vector<Tensor> fast = run(DType::f32), exact = run(DType::f64);
  // Errors relative to each gradient's largest element: its elements sum 2,048 products, and
  // one of them can be near zero, where an error relative to the element itself says nothing
  // about precision.
  for (size_t i = 0; i < fast.size(); ++i) {
    std::vector<double> got = fast[i].to_vector<double>(), want = exact[i].to_vector<double>();
    double worst = 0, scale = 0;
    for (size_t j = 0; j < got.size(); ++j) {
      worst = heed::testing::worse_of(worst, std::abs(got[j] - want[j]));
      scale = std::max(scale, std::abs(want[j]));
    }
    EXPECT_LT(worst, 1e-5 * scale) << "gradient " << i;
  }
}

TEST(Matmul, TransposedProductMatchesTheReference) {
  std::vector<DType> types{DType::f32};
  if (onednn_bf16_matmul_available()) types.push_back(DType::bf16);
  for (DType type : types) {
    for (auto [N, M, K] : {std::array<int64_t, 3>{1, 3, 5},
                           {37, 5, 13},
                           {300, 64, 40},
                           {2048, 512, 100},
                           {129, 1024, 512}}) {
      Tensor a = rand({N, M}, 40).to(type), b = rand({N, K}, 41).to(type);
      Tensor out = Tensor::empty({M, K}, DType::f32);
      ASSERT_TRUE(onednn_transposed_product(a, b, out)) << N << " " << M << " " << K;
      // bf16 operands: the product of the rounded values, summed in f32. An f32 sum of N
      // terms is within N * 2^-24 * sum(|term|) of the exact one, in any order.
      const Tensor a32 = a.to(DType::f32), b32 = b.to(DType::f32);
      const std::vector<double> got = out.to_vector<double>(),
                                want = reference(a32.transpose(0, 1), b32).to_vector<double>(),
                                magnitude =
                                    reference(magnitudes(a32).transpose(0, 1), magnitudes(b32))
                                        .to_vector<double>();
      int wrong = 0;
      for (size_t i = 0; i < got.size(); ++i) {
        wrong += std::abs(got[i] - want[i]) > N * std::ldexp(1.0, -24) * magnitude[i];
      }
      EXPECT_EQ(wrong, 0) << dtype_name(type) << " N=" << N << " M=" << M << " K=" << K;
    }
  }
  // From 2,048 rows of the result the packed matmul runs instead: nothing is written here.
  Tensor out = Tensor::empty({2048, 8}, DType::f32);
  EXPECT_FALSE(onednn_transposed_product(rand({16, 2048}, 42), rand({16, 8}, 43), out));
}

TEST(Matmul, LinearWeightGradientInBothLayoutsMatchesTheF64Path) {
  // Fewer than 2,048 outputs: the weight gradient runs as oneDNN's inner-product gradient.
  const int64_t rows = 300, in = 48, out = 40;
  Tensor r = rand({rows, out}, 44);
  for (WeightLayout layout : {WeightLayout::out_in, WeightLayout::in_out}) {
    const bool out_in = layout == WeightLayout::out_in;
    auto weight_grad = [&](DType type) {
      Tensor x = rand({rows, in}, 45).to(type);
      Tensor w = (out_in ? rand({out, in}, 46) : rand({in, out}, 46)).to(type);
      w.set_requires_grad(true);
      sum(mul(linear(x, w, Tensor(), layout), r.to(type))).backward();
      return w.grad();
    };
    Tensor fast = weight_grad(DType::f32), exact = weight_grad(DType::f64);
    ASSERT_EQ(fast.shape(), exact.shape());
    // Relative to the largest element, as in the test above: each element sums 300 products.
    std::vector<double> got = fast.to_vector<double>(), want = exact.to_vector<double>();
    double worst = 0, scale = 0;
    for (size_t j = 0; j < got.size(); ++j) {
      worst = heed::testing::worse_of(worst, std::abs(got[j] - want[j]));
      scale = std::max(scale, std::abs(want[j]));
    }
    EXPECT_LT(worst, 1e-5 * scale) << "out_in=" << out_in;
  }
}

TEST(Matmul, F64UsesTheReferencePathExactlyAsWritten) {
  Tensor a = from_vector<double>({1, 2, 3, 4}, {2, 2}),
         b = from_vector<double>({5, 6, 7, 8}, {2, 2});
  EXPECT_EQ(matmul(a, b).to_vector<double>(), (std::vector<double>{19, 22, 43, 50}));
}

TEST(Matmul, AttentionHeadProductsKeepTheHeadsLayoutAndMatchTheF64Path) {
  // q, k, v as attention makes them: [B, h, T, d] views of [B, T, C] projections (and, a layout
  // whose order is not its own inverse, of sequence-first [T, B, C] ones). The values product
  // writes its output in v's memory order (the heads merge without a copy), and the gradients
  // of q, k (through k^T) and v come back in their operands' layouts; all of it must still be
  // the f64 path's numbers.
  const int64_t B = 2, T = 7, H = 3, D = 8, C = H * D;
  Tensor r = rand({B, H, T, D}, 47);
  for (bool sequence_first : {false, true}) {
    auto heads = [&](const Tensor& x) {
      return sequence_first ? x.reshape({T, B, H, D}).permute({1, 2, 0, 3})
                            : x.reshape({B, T, H, D}).permute({0, 2, 1, 3});
    };
    auto run = [&](DType type) {
      const Shape shape = sequence_first ? Shape{T, B, C} : Shape{B, T, C};
      std::vector<Tensor> leaves{rand(shape, 48).to(type), rand(shape, 49).to(type),
                                 rand(shape, 50).to(type)};
      for (Tensor& t : leaves) t.set_requires_grad(true);
      Tensor scores = matmul(heads(leaves[0]), heads(leaves[1]).transpose(-1, -2));
      Tensor context = matmul(scores, heads(leaves[2]));
      if (type == DType::f32) {
        const Tensor memory_order =
            sequence_first ? context.permute({2, 0, 1, 3}) : context.permute({0, 2, 1, 3});
        EXPECT_TRUE(memory_order.is_contiguous()) << "sequence_first=" << sequence_first;
      }
      sum(mul(context, r.to(type))).backward();
      std::vector<Tensor> out{context};
      for (const Tensor& t : leaves) out.push_back(t.grad());
      return out;
    };
    const std::vector<Tensor> fast = run(DType::f32), exact = run(DType::f64);
    for (size_t i = 0; i < fast.size(); ++i) {
      ASSERT_EQ(fast[i].shape(), exact[i].shape()) << i;
      EXPECT_LT(max_relative_error(fast[i], exact[i]), 1e-5)
          << (i == 0 ? "context" : "gradient") << " " << i << " sequence_first=" << sequence_first;
    }
  }
}

// With two threads a product with enough work (2^24 multiply-adds) runs as two
// single-threaded oneDNN products, one per thread, each on its own rows of out (2-D) or its own
// elements of out's first batch dim. The pieces must give the whole product's numbers, written
// over memory filled with NaN first so that an element no piece writes cannot pass: odd and
// even counts (pieces of unequal size, or two at once of one primitive), a bias, a transposed
// a, a broadcast batch operand, attention's head views of [B, T, h, d] and of sequence-first
// [T, B, h * d] memory, three threads, f32 and bf16 operands. A 2-D product with under 128
// columns, less work or one thread stays whole.
TEST(Matmul, ProductsInOnePiecePerThreadMatchTheReference) {
  struct ThreadsScope {
    int saved = num_threads();
    ~ThreadsScope() { set_num_threads(saved); }
  } restore;
  const auto check = [](const Tensor& a, const Tensor& b, const Tensor& bias, bool in_pieces,
                        const char* what) {
    SCOPED_TRACE(what);
    for (DType type : {DType::f32, DType::bf16}) {
      if (type == DType::bf16 && !onednn_bf16_matmul_available()) continue;  // no such kernel
      const Tensor a_in = a.to(type), b_in = b.to(type);
      // Against the product of the operands as the kernel read them (rounded to bf16 or not),
      // within f32 accumulation's bound: K roundings of 2^-24 of the sum of |a| |b|.
      const Tensor want = reference(a_in.to(DType::f32), b_in.to(DType::f32), bias);
      Tensor out = full(want.shape(), std::nan(""), DType::f32);
      const size_t before = matmul_cache_stats().in_pieces;
      onednn_matmul(a_in, b_in, bias, out);
      EXPECT_EQ(matmul_cache_stats().in_pieces - before, in_pieces ? 1u : 0u) << dtype_name(type);
      const std::vector<double> got = out.to_vector<double>(), expected = want.to_vector<double>(),
                                magnitude = reference(magnitudes(a), magnitudes(b),
                                                      bias.defined() ? magnitudes(bias) : Tensor())
                                                .to_vector<double>();
      ASSERT_EQ(got.size(), expected.size());
      const double k = static_cast<double>(a.size(-1) + 1);  // + 1: the bias
      int wrong = 0;
      for (size_t i = 0; i < got.size(); ++i) {
        wrong += !(std::abs(got[i] - expected[i]) <= k * std::ldexp(1.0, -24) * magnitude[i]);
      }
      EXPECT_EQ(wrong, 0) << dtype_name(type);
    }
  };
  set_num_threads(2);
  check(rand({301, 256}, 60), rand({256, 230}, 61), Tensor(), true, "301 rows");
  check(rand({300, 256}, 62), rand({256, 230}, 63), rand({230}, 64), true, "300 rows, a bias");
  check(rand({256, 301}, 65).transpose(0, 1), rand({256, 230}, 66), Tensor(), true, "a transposed");
  check(rand({5, 67, 256}, 67), rand({5, 256, 200}, 68), Tensor(), true, "batch of 5");
  check(rand({4, 67, 256}, 69), rand({4, 256, 250}, 70), rand({250}, 71), true,
        "batch of 4, a bias");
  check(rand({1, 67, 256}, 72), rand({3, 256, 340}, 73), Tensor(), true, "a broadcast");
  const int64_t B = 3, T = 150, H = 4, D = 64;
  check(rand({B, T, H, D}, 74).permute({0, 2, 1, 3}), rand({B, T, H, D}, 75).permute({0, 2, 3, 1}),
        Tensor(), true, "attention scores from [B, T, h, d] views");
  check(rand({T, B + 1, H * D}, 76).reshape({T, B + 1, H, D}).permute({1, 2, 0, 3}),
        rand({T, B + 1, H * D}, 77).reshape({T, B + 1, H, D}).permute({1, 2, 3, 0}), Tensor(), true,
        "attention scores from sequence-first [T, B, h * d]");
  check(rand({301, 1024}, 78), rand({1024, 100}, 79), Tensor(), false, "100 columns");
  check(rand({64, 256}, 80), rand({256, 256}, 81), Tensor(), false, "less work");
  set_num_threads(3);
  check(rand({301, 256}, 82), rand({256, 230}, 83), rand({230}, 84), true, "three threads");
  set_num_threads(1);
  check(rand({301, 256}, 85), rand({256, 230}, 86), Tensor(), false, "one thread");
}
