#include <gtest/gtest.h>
#include <cstring>

#include "autograd/allocator.h"
#include "autograd/ops.h"
#include "autograd/random.h"

using namespace heed;

TEST(Tensor, FactoriesFillShapeAndValues) {
  Tensor z = zeros({2, 3});
  EXPECT_EQ(z.shape(), (Shape{2, 3}));
  EXPECT_EQ(z.numel(), 6);
  EXPECT_EQ(z.to_vector<float>(), std::vector<float>(6, 0.0f));
  EXPECT_EQ(full({2}, 2.5, DType::f64).to_vector<double>(), (std::vector<double>{2.5, 2.5}));
  EXPECT_EQ(arange(2, 5).to_vector<int64_t>(), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(ones({}, DType::f64).item(), 1.0);
}

TEST(Tensor, StorageIs64ByteAligned) {
  for (int64_t n : {1, 3, 17, 1000, 1 << 20}) {
    Tensor t = Tensor::empty({n});
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw_data()) % 64, 0u) << n;
  }
}

TEST(Tensor, FreedBlocksAreReused) {
  const auto before = allocator_stats();
  for (int i = 0; i < 10; ++i) Tensor t = Tensor::empty({1000, 1000});
  const auto after = allocator_stats();
  EXPECT_LE(after.os_allocations - before.os_allocations, 1u);
  EXPECT_GE(after.cache_hits - before.cache_hits, 9u);
}

TEST(Tensor, AFreedSmallBlockServesASmallerRequestUpToTwiceItsSize) {
  empty_cache();  // no block cached by another test may answer instead
  const size_t big = 900 << 10, smaller = 600 << 10, tiny = 300 << 10;  // all under 1 MiB
  void* block = allocate_block(big);
  free_block(block, big);
  const auto before = allocator_stats();
  void* reused = allocate_block(smaller);
  EXPECT_EQ(reused, block);
  void* fresh = allocate_block(tiny);  // under half of the cached block's size: not reused
  EXPECT_NE(fresh, block);
  const auto during = allocator_stats();
  EXPECT_EQ(during.cache_hits - before.cache_hits, 1u);
  EXPECT_EQ(during.os_allocations - before.os_allocations, 1u);
  free_block(reused, smaller);  // back onto the list of its own, larger class
  free_block(fresh, tiny);
  EXPECT_EQ(allocate_block(big), block);
  free_block(block, big);
  EXPECT_EQ(allocator_stats().allocated_bytes, before.allocated_bytes);
}

TEST(Tensor, AFreedLargeBlockIsSplitBetweenSmallerRequests) {
  empty_cache();  // best fit: a free block another test left could answer instead
  // The pages are never touched, so these cost address space only.
  const size_t big = size_t{301} << 20, part = size_t{101} << 20, rest = size_t{200} << 20;
  char* block = static_cast<char*>(allocate_block(big));
  free_block(block, big);
  const auto before = allocator_stats();
  void* first = allocate_block(part);
  void* second = allocate_block(rest);
  EXPECT_EQ(first, block);
  EXPECT_EQ(second, block + part);
  EXPECT_EQ(allocator_stats().os_allocations, before.os_allocations);
  EXPECT_EQ(allocator_stats().allocated_bytes - before.allocated_bytes, part + rest);
  free_block(second, rest);
  free_block(first, part);
  EXPECT_EQ(allocate_block(big), block);  // the two halves merged back
  free_block(block, big);
  EXPECT_EQ(allocator_stats().allocated_bytes, before.allocated_bytes);
}

TEST(Tensor, ViewsShareStorage) {
  Tensor t = arange(0, 12, DType::f32).reshape({3, 4});
  Tensor tr = t.transpose(0, 1);
  EXPECT_EQ(tr.storage(), t.storage());
  EXPECT_FALSE(tr.is_contiguous());
  EXPECT_EQ(tr.shape(), (Shape{4, 3}));
  EXPECT_EQ(tr.contiguous().to_vector<float>(),
            (std::vector<float>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
  Tensor row = t.select(0, 1);
  EXPECT_EQ(row.storage(), t.storage());
  EXPECT_EQ(row.to_vector<float>(), (std::vector<float>{4, 5, 6, 7}));
  Tensor col = t.slice(1, 1, 4, 2);
  EXPECT_EQ(col.to_vector<float>(), (std::vector<float>{1, 3, 5, 7, 9, 11}));
  row.fill_(-1);  // writes through the view
  EXPECT_EQ(t.select(0, 1).to_vector<float>(), (std::vector<float>{-1, -1, -1, -1}));
}

TEST(Tensor, PermuteAndReshapeInferredDim) {
  Tensor t = arange(0, 24, DType::f64).reshape({2, 3, -1});
  EXPECT_EQ(t.shape(), (Shape{2, 3, 4}));
  Tensor p = t.permute({2, 0, 1});
  EXPECT_EQ(p.shape(), (Shape{4, 2, 3}));
  EXPECT_EQ(p.to_vector<double>()[1], 4.0);  // p[0,0,1] = t[0,1,0]
  EXPECT_EQ(p.reshape({4, 6}).shape(), (Shape{4, 6}));
}

TEST(Tensor, ConcatAndSplitRoundTrip) {
  Tensor a = arange(0, 6, DType::f32).reshape({2, 3});
  Tensor b = arange(6, 10, DType::f32).reshape({2, 2});
  Tensor c = concat({a, b}, 1);
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{0, 1, 2, 6, 7, 3, 4, 5, 8, 9}));
  auto parts = split(c, {3, 2}, 1);
  EXPECT_EQ(parts[0].to_vector<float>(), a.to_vector<float>());
  EXPECT_EQ(parts[1].to_vector<float>(), b.to_vector<float>());
  auto chunks = chunk(arange(0, 5, DType::f32), 2, 0);
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(chunks[1].to_vector<float>(), (std::vector<float>{3, 4}));
}

TEST(Tensor, RandomIsSeededAndDeterministic) {
  Generator g1(123), g2(123), g3(124);
  Tensor a = randn({1000}, g1), b = randn({1000}, g2), c = randn({1000}, g3);
  EXPECT_EQ(a.to_vector<float>(), b.to_vector<float>());
  EXPECT_NE(a.to_vector<float>(), c.to_vector<float>());
  // Successive draws from one generator differ.
  EXPECT_NE(randn({1000}, g1).to_vector<float>(), a.to_vector<float>());
}

TEST(Tensor, RandnMomentsMatchRequest) {
  Generator g(5);
  Tensor t = randn({200000}, g, DType::f64, 1.0, 2.0);
  const double m = mean(t).item();
  const double var = mean(pow(add(t, -m), 2.0)).item();
  // Standard errors: 2/sqrt(n) = 0.0045 for the mean; ~0.0126 for the variance (4*sqrt(2/n)).
  EXPECT_NEAR(m, 1.0, 5 * 0.0045);
  EXPECT_NEAR(var, 4.0, 5 * 0.0126);
  Tensor u = uniform({200000}, g, -1.0, 3.0, DType::f64);
  EXPECT_NEAR(mean(u).item(), 1.0, 5 * 4.0 / std::sqrt(12.0 * 200000));
}

TEST(Tensor, Bf16RoundTripIsWithinBf16Precision) {
  Tensor x = from_vector<float>({1.0f, 3.14159f, -2.5e-3f, 65504.0f}, {4});
  std::vector<float> back = x.to(DType::bf16).to(DType::f32).to_vector<float>();
  std::vector<float> orig = x.to_vector<float>();
  for (size_t i = 0; i < back.size(); ++i) {
    EXPECT_NEAR(back[i], orig[i], std::abs(orig[i]) * (1.0 / 256));  // 8 bits of mantissa
  }
}

TEST(Tensor, Bf16ConversionOfATensorRoundsAsTheScalarDoes) {
  // The vectorised f32 -> bf16 copy against bf16(float): ties to even both ways, the largest
  // finite values (which round to infinity), infinities, NaNs and a sweep of bit patterns.
  std::vector<uint32_t> patterns = {0x3f808000u, 0x3f818000u, 0x3f807fffu, 0x7f7fffffu,
                                    0xff7fffffu, 0x7f800000u, 0xff800000u, 0x7fc00000u,
                                    0x7f800001u, 0xffffffffu, 0x00000001u, 0x80000000u};
  for (uint32_t u = 0; u < 0xffff0000u; u += 0x00010003u) patterns.push_back(u);
  std::vector<float> values(patterns.size());
  std::memcpy(values.data(), patterns.data(), 4 * patterns.size());
  Tensor x = from_vector<float>(values, {static_cast<int64_t>(values.size())});
  Tensor y = x.to(DType::bf16);
  const bf16* bits = y.data<bf16>();
  for (size_t i = 0; i < values.size(); ++i) {
    ASSERT_EQ(bits[i].bits, bf16(values[i]).bits) << std::hex << patterns[i];
  }
  // A strided view (every other value) converts element by element, to the same bits.
  const int64_t half = static_cast<int64_t>(values.size()) / 2;
  Tensor every_other = x.slice(0, 0, 2 * half, 2).to(DType::bf16);
  for (int64_t i = 0; i < half; ++i) {
    ASSERT_EQ(every_other.data<bf16>()[i].bits, bf16(values[static_cast<size_t>(2 * i)]).bits)
        << std::hex << patterns[static_cast<size_t>(2 * i)];
  }
}

TEST(Tensor, InPlaceOpsBumpVersion) {
  Tensor t = zeros({3});
  const uint64_t v0 = t.version();
  t.add_(ones({3}), 2.0);
  EXPECT_GT(t.version(), v0);
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{2, 2, 2}));
  t.mul_(0.5);
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{1, 1, 1}));
}

TEST(Tensor, ReshapeOfAStridedSliceIsAView) {
  // [B, T, 3C] -> the k part [B, T, C] -> [B, T, h, d]: splitting the last dim needs no copy.
  Tensor qkv = arange(0, 2 * 3 * 12, DType::f32).reshape({2, 3, 12});
  Tensor k = qkv.slice(-1, 4, 8);
  Tensor heads = k.reshape({2, 3, 2, 2});
  EXPECT_EQ(heads.storage(), qkv.storage());
  EXPECT_EQ(heads.contiguous().to_vector<float>(), k.contiguous().to_vector<float>());
  // Merging dims that are not adjacent in memory must copy, and still be right.
  Tensor t = arange(0, 6, DType::f32).reshape({2, 3}).transpose(0, 1);
  Tensor flat = t.reshape({6});
  EXPECT_NE(flat.storage(), t.storage());
  EXPECT_EQ(flat.to_vector<float>(), (std::vector<float>{0, 3, 1, 4, 2, 5}));
}
