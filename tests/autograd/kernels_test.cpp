// The row reductions the softmax and cross-entropy kernels use, the blocked packing of matmul
// weights, dropout's bit masks, and the op-time table behind HEED_PROFILE.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "autograd/kernels/dropout_draws.h"
#include "autograd/kernels/pack_blocked.h"
#include "autograd/kernels/row_reduce.h"
#include "autograd/ops.h"
#include "autograd/random.h"
#include "base/profile.h"

using namespace heed;

TEST(RowReduce, SumDotMaxAndSumExpAgreeWithPlainLoopsForEveryLength) {
  // Lengths below, at and around multiples of the lane count, so every tail is covered.
  for (int64_t n : {0, 1, 5, 15, 16, 17, 31, 32, 33, 100, 128}) {
    std::vector<double> x(n), y(n);
    for (int64_t i = 0; i < n; ++i) {
      x[i] = std::sin(0.7 * static_cast<double>(i)) * 3.0;
      y[i] = std::cos(0.3 * static_cast<double>(i));
    }
    double sum = 0, dot = 0, sum_exp = 0, max = -std::numeric_limits<double>::infinity();
    for (int64_t i = 0; i < n; ++i) max = std::max(max, x[i]);
    for (int64_t i = 0; i < n; ++i) {
      sum += x[i];
      dot += x[i] * y[i];
      sum_exp += std::exp(x[i] - max);
    }
    EXPECT_NEAR(rows::sum(x.data(), n), sum, 1e-12) << n;
    EXPECT_NEAR(rows::dot(x.data(), y.data(), n), dot, 1e-12) << n;
    EXPECT_EQ(rows::max(x.data(), n, -std::numeric_limits<double>::infinity()), max) << n;
    if (n > 0) {
      EXPECT_NEAR(rows::sum_exp(x.data(), max, n), sum_exp, 1e-12) << n;
    }
  }
}

TEST(RowReduce, MaxPassesOverNaNAndKeepsTheLargest) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> x(40, 1.0);
  x[3] = 9.0;
  x[19] = nan;  // in the same lane as x[3], after it
  x[35] = nan;  // in the tail
  EXPECT_EQ(rows::max(x.data(), 40, -std::numeric_limits<double>::infinity()), 9.0);
}

// float has a max of its own (two 8-lane vectors): the largest value placed at every position
// of rows whose lengths leave every tail, with NaNs in both vectors' lanes and in the tail
// passed over, as the array form passes over them.
TEST(RowReduce, FloatMaxFindsTheLargestAtEveryPositionAndPassesOverNaN) {
  const float neg_inf = -std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int64_t n : {1, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 47, 128, 130}) {
    for (int64_t at = 0; at < n; ++at) {
      std::vector<float> x(n);
      for (int64_t i = 0; i < n; ++i) x[i] = -1.0f - 0.01f * static_cast<float>(i);
      x[at] = 5.0f;
      ASSERT_EQ(rows::max(x.data(), n, neg_inf), 5.0f) << "length " << n << ", at " << at;
      for (int64_t i = 0; i < n; i += 3) {
        if (i != at) x[i] = nan;
      }
      ASSERT_EQ(rows::max(x.data(), n, neg_inf), 5.0f)
          << "with NaNs, length " << n << ", at " << at;
    }
  }
  EXPECT_EQ(rows::max(static_cast<const float*>(nullptr), 0, neg_inf), neg_inf);
  std::vector<float> removed(20, neg_inf);
  EXPECT_EQ(rows::max(removed.data(), 20, neg_inf), neg_inf);
}

// ... and the same bits as the array form it replaced (16 partial maxima, the tail, then the
// partials in lane order), where the order shows: ties of +0 and -0, NaNs, repeated values.
TEST(RowReduce, FloatMaxGivesTheArrayFormsBits) {
  const auto array_form = [](const float* x, int64_t n, float lowest) {
    float acc[16];
    for (float& a : acc) a = lowest;
    int64_t c = 0;
    for (; c + 16 <= n; c += 16) {
      for (int64_t j = 0; j < 16; ++j) acc[j] = x[c + j] > acc[j] ? x[c + j] : acc[j];
    }
    float m = lowest;
    for (; c < n; ++c) m = std::max(m, x[c]);
    for (float a : acc) m = std::max(m, a);
    return m;
  };
  const float values[] = {0.0f, -0.0f, -1.0f, 5.0f, std::numeric_limits<float>::quiet_NaN()};
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> pick(0, 4), pick_no_five(0, 2);
  for (int64_t n = 0; n <= 50; ++n) {
    for (int trial = 0; trial < 40; ++trial) {
      std::vector<float> x(n);
      // Half the rows without 5, so that the ties of zeros decide the result.
      for (float& v : x) v = values[trial % 2 ? pick(rng) : pick_no_five(rng)];
      for (float lowest : {-std::numeric_limits<float>::infinity(), -0.0f, 0.0f}) {
        const float want = array_form(x.data(), n, lowest);
        ASSERT_EQ(std::bit_cast<uint32_t>(rows::max(x.data(), n, lowest)),
                  std::bit_cast<uint32_t>(want))
            << "length " << n << ", trial " << trial << ", lowest " << lowest;
      }
    }
  }
  // The second vector's -0 after the first's +0 keeps +0; the other way round, -0.
  std::vector<float> zeros(16, 0.0f);
  std::fill(zeros.begin() + 8, zeros.end(), -0.0f);
  EXPECT_EQ(std::bit_cast<uint32_t>(rows::max(zeros.data(), 16, -1.0f)), 0u);
  std::fill(zeros.begin(), zeros.begin() + 8, -0.0f);
  std::fill(zeros.begin() + 8, zeros.end(), 0.0f);
  EXPECT_EQ(std::bit_cast<uint32_t>(rows::max(zeros.data(), 16, -1.0f)), 0x80000000u);
}

// Element (k, n) of b lands in block (n / block_n, k / 16), at row k % 16 and column
// n % block_n of it (bf16: row pair (k % 16) / 2, the pair's two values side by side), and
// the padding past K and N is zero. The product with oneDNN is checked in matmul_test.cpp.
TEST(PackBlocked, PlacesEveryElementAndZeroesThePadding) {
  const int64_t K = 21, N = 70;
  for (bool transposed : {false, true}) {
    for (bool pairs : {false, true}) {
      const BlockedLayout layout{pairs ? 32 : 64, pairs};
      const int64_t blocks_k = 2, blocks_n = pairs ? 3 : 2;
      ASSERT_EQ(packed_elements(K, N, layout), blocks_k * 16 * blocks_n * layout.block_n);
      // Values 1..K*N, so that zero marks padding; b stored [K, N] or, transposed, [N, K].
      std::vector<uint32_t> b32(K * N);
      std::vector<uint16_t> b16(K * N);
      const int64_t stride_k = transposed ? 1 : N, stride_n = transposed ? K : 1;
      for (int64_t k = 0; k < K; ++k) {
        for (int64_t n = 0; n < N; ++n) {
          b32[k * stride_k + n * stride_n] = static_cast<uint32_t>(1 + k * N + n);
          b16[k * stride_k + n * stride_n] = static_cast<uint16_t>(1 + k * N + n);
        }
      }
      std::vector<uint32_t> out32(packed_elements(K, N, layout), 7);
      std::vector<uint16_t> out16(packed_elements(K, N, layout), 7);
      if (pairs) {
        pack_blocked(b16.data(), DType::bf16, K, N, stride_k, stride_n, layout, out16.data());
      } else {
        pack_blocked(b32.data(), DType::f32, K, N, stride_k, stride_n, layout, out32.data());
      }
      for (int64_t k = 0; k < blocks_k * 16; ++k) {
        for (int64_t n = 0; n < blocks_n * layout.block_n; ++n) {
          const int64_t block = (n / layout.block_n) * blocks_k + k / 16;
          const int64_t r = k % 16, c = n % layout.block_n;
          const int64_t at =
              block * 16 * layout.block_n +
              (pairs ? (r / 2) * layout.block_n * 2 + c * 2 + r % 2 : r * layout.block_n + c);
          const uint32_t want = k < K && n < N ? static_cast<uint32_t>(1 + k * N + n) : 0;
          const uint32_t got = pairs ? out16[at] : out32[at];
          ASSERT_EQ(got, pairs ? static_cast<uint16_t>(want) : want)
              << "k=" << k << " n=" << n << " transposed=" << transposed << " pairs=" << pairs;
        }
      }
    }
  }
}

TEST(DropoutMask, FlagsBecomeOneBitEachAndComeBackUnchanged) {
  // Element i is bit i % 8 of byte i / 8; lengths that end inside a byte leave its high bits
  // zero; apply_keep_bits multiplies by the scale exactly where a bit is set.
  for (int64_t n : {1, 7, 8, 9, 63, 64, 65, 1000}) {
    std::vector<uint8_t> flags(static_cast<size_t>(n) + 8);
    for (int64_t i = 0; i < n; ++i) flags[i] = (i * 7 + i / 3) % 5 < 2;
    const std::vector<uint8_t> original(flags.begin(), flags.begin() + n);
    std::vector<uint8_t> bits(static_cast<size_t>(keep_mask_bytes(n)), 0xAA);
    pack_flags(flags.data(), n, bits.data());
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ((bits[i / 8] >> (i % 8)) & 1, original[i]) << "n " << n << " element " << i;
    }
    if (n % 8) {
      EXPECT_EQ(bits.back() >> (n % 8), 0) << n;
    }
    std::vector<float> g(n), out(n);
    for (int64_t i = 0; i < n; ++i) g[i] = static_cast<float>(i + 1);
    apply_keep_bits<float>(bits.data(), n, 2.0f, g.data(), out.data());
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(out[i], original[i] ? 2.0f * g[i] : 0.0f) << i;
  }
}

TEST(Profile, OpTimesAddUpPerNameLongestFirst) {
  reset_op_times();
  record_op_time("linear", 0.002);
  record_op_time("gelu", 0.001);
  record_op_time("linear", 0.003, 0.002);
  const std::vector<OpTime> ops = op_times();
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].name, "linear");
  EXPECT_NEAR(ops[0].seconds, 0.005, 1e-15);
  EXPECT_NEAR(ops[0].product_seconds, 0.002, 1e-15);
  EXPECT_EQ(ops[0].calls, 2);
  EXPECT_EQ(ops[1].name, "gelu");
  EXPECT_EQ(ops[1].product_seconds, 0.0);
  const std::string report = op_time_report();
  EXPECT_NE(report.find("linear"), std::string::npos);
  EXPECT_NE(report.find("83.3%"), std::string::npos);                      // 5 of 6 ms
  EXPECT_NE(report.find("0.002 s (33.3%)"), std::string::npos) << report;  // 2 of 6 ms
  reset_op_times();
  EXPECT_TRUE(op_times().empty());
}

// A Linear's time includes its oneDNN product, which the report counts as products; an op
// without a product has none.
TEST(Profile, AnOpsProductsAreCountedInsideIt) {
  const bool was = profiling();
  set_profiling(true);
  reset_op_times();
  Generator gen(3);
  const Tensor x = randn({256, 128}, gen), w = randn({64, 128}, gen);
  const Tensor y = gelu(linear(x, w, Tensor()));
  const std::vector<OpTime> ops = op_times();
  set_profiling(was);
  reset_op_times();
  ASSERT_EQ(ops.size(), 2u);
  for (const OpTime& op : ops) {
    if (op.name == "linear") {
      EXPECT_GT(op.product_seconds, 0.0);
      EXPECT_LE(op.product_seconds, op.seconds);
    } else {
      EXPECT_EQ(op.name, "gelu");
      EXPECT_EQ(op.product_seconds, 0.0);
    }
  }
  EXPECT_EQ(y.size(1), 64);
}
