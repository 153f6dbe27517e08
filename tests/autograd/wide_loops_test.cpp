// The loops built for AVX-512 and AVX2 (kernels/wide_loops.cpp) against the same loops written
// inline here, which this test's own build compiles for the baseline (AVX2) only: on an
// AVX-512 CPU the library runs its AVX-512 version, and the two must agree to the bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "autograd/kernels/cross_entropy_row.h"
#include "autograd/kernels/dropout_draws.h"
#include "autograd/kernels/fast_math.h"
#include "autograd/kernels/gelu.h"
#include "autograd/kernels/layer_norm_rows.h"
#include "autograd/kernels/row_reduce.h"
#include "autograd/kernels/wide_loops.h"

using namespace heed;

namespace {

// 1,001 values (not a whole number of vectors of any width) over GELU's interesting range,
// with the edges: zeros of both signs, huge values, infinities and a NaN.
std::vector<float> inputs() {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> x(1001);
  for (float& v : x) v = normal(rng);
  const float inf = std::numeric_limits<float>::infinity();
  const float edges[] = {0.0f, -0.0f, 1e30f, -1e30f, inf, -inf, std::nanf(""), 9.5f, -9.5f};
  std::copy(std::begin(edges), std::end(edges), x.begin() + 500);
  return x;
}

void expect_same_bits(const std::vector<float>& a, const std::vector<float>& b, const char* what) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    uint32_t x, y;
    std::memcpy(&x, &a[i], 4);
    std::memcpy(&y, &b[i], 4);
    ASSERT_EQ(x, y) << what << " at " << i << ": " << a[i] << " vs " << b[i];
  }
}

// The same bits, or NaN in both (a NaN's sign and payload depend on the order of operands that
// the vector code picks, not on the row).
void expect_same_bits_or_nan(const std::vector<float>& a, const std::vector<float>& b,
                             const char* what) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(b[i])) {
      EXPECT_TRUE(std::isnan(a[i])) << what << " at " << i;
    } else {
      ASSERT_EQ(std::bit_cast<uint32_t>(a[i]), std::bit_cast<uint32_t>(b[i]))
          << what << " at " << i << ": " << a[i] << " vs " << b[i];
    }
  }
}

}  // namespace

TEST(WideLoops, GeluAndItsGradientGiveTheBaselineBits) {
  const std::vector<float> h = inputs();
  std::vector<float> g(h.size());
  for (size_t i = 0; i < g.size(); ++i) g[i] = 0.25f * static_cast<float>(i % 17) - 2.0f;
  std::vector<bf16> h16(h.size());
  for (size_t i = 0; i < h.size(); ++i) h16[i] = bf16(h[i]);
  const int64_t n = static_cast<int64_t>(h.size());
  for (bool tanh : {false, true}) {
    SCOPED_TRACE(tanh ? "tanh" : "erf");
    std::vector<float> wide_out(n), plain(n);
    wide::gelu(tanh, h.data(), n, wide_out.data());
    for (int64_t i = 0; i < n; ++i) plain[i] = tanh ? gelu_tanh(h[i]) : gelu_erf(h[i]);
    expect_same_bits(wide_out, plain, "gelu");

    wide::gelu_gradient(tanh, g.data(), h.data(), n, wide_out.data());
    for (int64_t i = 0; i < n; ++i) {
      plain[i] = g[i] * (tanh ? gelu_tanh_grad(h[i]) : gelu_erf_grad(h[i]));
    }
    expect_same_bits(wide_out, plain, "gelu gradient");

    std::vector<float> in_place = g;  // out may be g
    wide::gelu_gradient(tanh, in_place.data(), h16.data(), n, in_place.data());
    for (int64_t i = 0; i < n; ++i) {
      const float x = static_cast<float>(h16[i]);
      plain[i] = g[i] * (tanh ? gelu_tanh_grad(x) : gelu_erf_grad(x));
    }
    expect_same_bits(in_place, plain, "gelu gradient of a bf16 input, in place");
  }
}

// Denormals, NaNs with payloads, the largest finite floats and ties, in every lane of a
// vector and in tails of every length, round as bf16_bits_of does, and nothing past the end
// is written.
TEST(WideLoops, RoundingToBf16KeepsDenormalsAndNaNPayloadsInEveryLaneAndTail) {
  const uint32_t specials[] = {0x00000001, 0x00018000, 0x007fffff, 0x807fffff, 0x80008000,
                               0x00800000, 0x7f7fffff, 0xff7fffff, 0x7f800001, 0xffc12345,
                               0x7f80ffff, 0x3f808000, 0x3f818000, 0x80000000, 0x7f800000};
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 100.0f);
  for (uint32_t special : specials) {
    for (int64_t n : {1, 7, 15, 16, 17, 31, 33, 48}) {
      for (int64_t at = 0; at < n; ++at) {
        std::vector<float> x(static_cast<size_t>(n));
        for (float& v : x) v = normal(rng);
        std::memcpy(&x[static_cast<size_t>(at)], &special, 4);
        std::vector<bf16> out(static_cast<size_t>(n) + 1);
        out[static_cast<size_t>(n)].bits = 0xabcd;  // past the end: must stay untouched
        wide::round_to_bf16(x.data(), n, out.data());
        for (int64_t i = 0; i < n; ++i) {
          ASSERT_EQ(out[static_cast<size_t>(i)].bits, bf16_bits_of(x[static_cast<size_t>(i)]))
              << std::hex << special << std::dec << " at " << at << ", n " << n << ", lane " << i;
        }
        ASSERT_EQ(out[static_cast<size_t>(n)].bits, 0xabcd) << "n " << n;
      }
    }
  }
}

TEST(WideLoops, RoundingToBf16AndColumnSumsGiveTheBaselineBits) {
  std::vector<float> x = inputs();
  x[10] = 1.00390625f;  // exactly halfway between two bf16 values: rounds to even
  x[11] = 1.01171875f;  // halfway the other way
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<bf16> wide_out(n), plain(n);
  wide::round_to_bf16(x.data(), n, wide_out.data());
  round_to_bf16(x.data(), n, plain.data());
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(wide_out[i].bits, plain[i].bits) << "at " << i;
  EXPECT_EQ(wide_out[10].bits, 0x3F80);
  EXPECT_EQ(wide_out[11].bits, 0x3F82);

  std::vector<double> sums(n, 0.5), expected(n, 0.5);
  for (int rep = 0; rep < 3; ++rep) {
    wide::add_to_sums(x.data(), n, sums.data());
    for (int64_t i = 0; i < n; ++i) expected[i] += x[i];
  }
  for (int64_t i = 0; i < n; ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(sums[i])) << "at " << i;
    } else {
      ASSERT_EQ(sums[i], expected[i]) << "at " << i;
    }
  }
}

TEST(WideLoops, ScaleAndMaskGivesTheBaselineBits) {
  const float neg_inf = -std::numeric_limits<float>::infinity();
  const std::vector<float> x = inputs();
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<uint8_t> keep(x.size());
  for (size_t i = 0; i < keep.size(); ++i) keep[i] = static_cast<uint8_t>(i % 7 == 3 ? 0 : i % 5);
  for (bool masked : {false, true}) {
    SCOPED_TRACE(masked ? "masked" : "scaled only");
    std::vector<float> wide_out(x.size()), plain(x.size());
    // 1 / sqrt(32), a scale whose products round.
    const float scale = 0.17677669f;
    wide::scale_and_mask(x.data(), masked ? keep.data() : nullptr, scale, n, wide_out.data());
    for (int64_t i = 0; i < n; ++i) plain[i] = !masked || keep[i] ? x[i] * scale : neg_inf;
    expect_same_bits_or_nan(wide_out, plain, "scaled scores");
  }
}

TEST(WideLoops, SoftmaxRowGivesTheBaselineBits) {
  const float neg_inf = -std::numeric_limits<float>::infinity();
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 4.0f);
  // Widths around the vector widths, limits short of the width (causal rows), removed keys.
  for (int64_t width : {1, 7, 16, 37, 128, 515}) {
    for (int64_t limit : {width, width / 2, int64_t{0}}) {
      SCOPED_TRACE(::testing::Message() << "width " << width << ", limit " << limit);
      std::vector<float> row(width);
      for (float& v : row) v = normal(rng);
      for (int64_t c = 3; c < width; c += 5) row[c] = neg_inf;
      std::vector<float> plain = row;
      const bool any = wide::softmax_row(row.data(), limit, width);
      const float m = rows::max(static_cast<const float*>(plain.data()), limit, neg_inf);
      ASSERT_EQ(any, m != neg_inf);
      if (m == neg_inf) {
        std::fill(plain.begin(), plain.end(), 0.0f);
      } else {
        for (int64_t c = 0; c < limit; ++c) plain[c] = fast::exp_nonpositive(plain[c] - m);
        const float inv = 1.0f / rows::sum(static_cast<const float*>(plain.data()), limit);
        for (int64_t c = 0; c < limit; ++c) plain[c] *= inv;
        std::fill(plain.begin() + limit, plain.end(), 0.0f);
        double total = 0.0;
        for (float p : row) total += p;
        EXPECT_NEAR(total, 1.0, 1e-5);
      }
      expect_same_bits(row, plain, "softmax row");
    }
  }
  // Every key removed: zeros, and false.
  std::vector<float> removed(9, neg_inf);
  EXPECT_FALSE(wide::softmax_row(removed.data(), 9, 9));
  for (float p : removed) EXPECT_EQ(p, 0.0f);
}

TEST(WideLoops, CrossEntropyRowGivesTheBaselineBits) {
  // linear_cross_entropy's pass over one row of 1,001 logits: loss, gradient (in f32 or only
  // its bf16 rounding) and arg max, with and without label smoothing, and an ignored target.
  const std::vector<float> logits = [] {
    std::vector<float> x = inputs();
    for (float& v : x) v = std::fabs(v) < 50.0f ? v : 1.5f;  // ordinary logits: no NaN, no 1e30
    return x;
  }();
  const int64_t classes = static_cast<int64_t>(logits.size());
  for (double smoothing : {0.0, 0.1}) {
    for (int64_t target : {int64_t{17}, int64_t{-100}}) {
      for (bool to_bf16 : {false, true}) {
        SCOPED_TRACE(::testing::Message() << "smoothing " << smoothing << ", target " << target
                                          << ", bf16 gradient " << to_bf16);
        const CrossEntropyRowOptions options{
            .ignore_index = -100, .smoothing = smoothing, .scale = 1.0 / 32, .gradient = true};
        std::vector<float> wide_row = logits, plain_row = logits;
        std::vector<bf16> wide_rounded(classes), plain_rounded(classes);
        int64_t wide_prediction = -1, plain_prediction = -1;
        const double wide_loss =
            wide::cross_entropy_row(wide_row.data(), classes, target, options,
                                    to_bf16 ? wide_rounded.data() : nullptr, &wide_prediction);
        const double plain_loss =
            cross_entropy_row(plain_row.data(), classes, target, options,
                              to_bf16 ? plain_rounded.data() : nullptr, &plain_prediction);
        EXPECT_EQ(wide_loss, plain_loss);
        EXPECT_EQ(wide_prediction, plain_prediction);
        EXPECT_EQ(wide_prediction, std::max_element(logits.begin(), logits.end()) - logits.begin());
        if (target != -100) {
          EXPECT_GT(wide_loss, 0.0);
        }
        if (to_bf16) {
          for (int64_t c = 0; c < classes; ++c) {
            ASSERT_EQ(wide_rounded[c].bits, plain_rounded[c].bits) << "at " << c;
          }
        } else {
          expect_same_bits(wide_row, plain_row, "gradient");
        }
      }
    }
  }
}

TEST(WideLoops, DropoutLoopsGiveTheBaselineBits) {
  // Draws against a threshold, the kept values scaled and the keep bits packed; then the bits
  // applied to a gradient (in place too), over 1,001 elements.
  const std::vector<float> x = inputs();
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<uint16_t> draws(n);
  std::mt19937 rng(3);
  for (uint16_t& d : draws) d = static_cast<uint16_t>(rng());
  const uint32_t threshold = dropout_threshold(0.3);
  std::vector<float> wide_out(n), plain_out(n);
  std::vector<uint8_t> wide_bits(keep_mask_bytes(n)), plain_bits(keep_mask_bytes(n));
  wide::apply_dropout_draws(draws.data(), n, threshold, 1.0f / 0.7f, x.data(), wide_out.data(),
                            wide_bits.data());
  apply_dropout_draws_loop<float>(draws.data(), n, threshold, 1.0f / 0.7f, x.data(),
                                  plain_out.data(), plain_bits.data());
  expect_same_bits(wide_out, plain_out, "dropped values");
  ASSERT_EQ(wide_bits, plain_bits);
  int64_t kept = 0;
  for (int64_t i = 0; i < n; ++i) kept += (wide_bits[i / 8] >> (i % 8)) & 1;
  EXPECT_GT(kept, n / 2);  // about 70% kept
  EXPECT_LT(kept, n * 9 / 10);

  std::vector<float> g(n);
  for (int64_t i = 0; i < n; ++i) g[i] = 0.01f * static_cast<float>(i) - 3.0f;
  std::vector<float> in_place = g;
  wide::apply_keep_bits(wide_bits.data(), n, 1.0f / 0.7f, in_place.data(), in_place.data());
  apply_keep_bits_loop<float>(plain_bits.data(), n, 1.0f / 0.7f, g.data(), plain_out.data());
  expect_same_bits(in_place, plain_out, "gradient through the keep bits");
}

TEST(WideLoops, LayerNormRowsGiveTheBaselineBits) {
  // Rows of 1,001, 33 and 7 elements (whole vectors and tails, a row under one vector), over
  // finite inputs and over inputs(), whose infinities and NaN make some rows NaN.
  std::vector<float> finite = inputs();
  for (float& v : finite) {
    if (!std::isfinite(v) || std::abs(v) > 1e6f) v = 0.5f;
  }
  for (const std::vector<float>& x : {finite, inputs()}) {
    std::vector<float> g(x.size()), w(x.size()), b(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      g[i] = 0.25f * static_cast<float>(i % 17) - 2.0f;
      w[i] = 1.0f + 0.01f * static_cast<float>(i % 13);
      b[i] = 0.1f * static_cast<float>(i % 7);
    }
    for (int64_t width : {1001, 33, 7}) {
      SCOPED_TRACE(width);
      for (int64_t at = 0; at + width <= static_cast<int64_t>(x.size()); at += width) {
        std::vector<float> wide_out(width), plain(width);
        float wide_stats[2], plain_stats[2];
        wide::layer_norm_row(x.data() + at, w.data(), b.data(), width, 1e-5f, wide_out.data(),
                             &wide_stats[0], &wide_stats[1]);
        rows::layer_norm_row(x.data() + at, w.data(), b.data(), width, 1e-5f, plain.data(),
                             &plain_stats[0], &plain_stats[1]);
        expect_same_bits_or_nan(wide_out, plain, "layer_norm_row");
        expect_same_bits_or_nan({wide_stats[0], wide_stats[1]}, {plain_stats[0], plain_stats[1]},
                                "stats");

        std::vector<double> wide_sums(2 * width, 0.5), plain_sums(2 * width, 0.5);
        wide::layer_norm_backward_row(x.data() + at, g.data() + at, w.data(), width, wide_stats[0],
                                      wide_stats[1], wide_out.data(), wide_sums.data(),
                                      wide_sums.data() + width);
        rows::layer_norm_backward_row(x.data() + at, g.data() + at, w.data(), width, plain_stats[0],
                                      plain_stats[1], plain.data(), plain_sums.data(),
                                      plain_sums.data() + width);
        expect_same_bits_or_nan(wide_out, plain, "layer_norm_backward_row");
        // Written over the incoming gradient, as LayerNorm's backward does when it may.
        std::vector<float> in_place(g.begin() + at, g.begin() + at + width);
        std::vector<double> in_place_sums(2 * width, 0.5);
        wide::layer_norm_backward_row(x.data() + at, in_place.data(), w.data(), width,
                                      wide_stats[0], wide_stats[1], in_place.data(),
                                      in_place_sums.data(), in_place_sums.data() + width);
        expect_same_bits_or_nan(in_place, plain, "layer_norm_backward_row in place");
        for (int64_t i = 0; i < 2 * width; ++i) {
          if (std::isnan(plain_sums[i])) {
            EXPECT_TRUE(std::isnan(wide_sums[i]) && std::isnan(in_place_sums[i])) << "sum " << i;
          } else {
            ASSERT_EQ(wide_sums[i], plain_sums[i]) << "sum " << i;
            ASSERT_EQ(in_place_sums[i], plain_sums[i]) << "sum " << i << " in place";
          }
        }
      }
    }
  }
}
