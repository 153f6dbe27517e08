// GFLOP/s of heed's matrix products on the shapes of a Transformer layer, next to the
// reference kernel on the same multiplication. Run: build/bench/bench_matmul
//   --benchmark_counters_tabular=true
// Shapes: a batch of 32 sequences of 128 tokens (4,096 rows); hidden 256 (BERT-mini, 4
// heads) and 768 (BERT-base, 12 heads); head size 64.
#include <benchmark/benchmark.h>

#include "autograd/kernels/matmul_reference.h"
#include "autograd/ops.h"
#include "autograd/random.h"

using namespace heed;

namespace {

constexpr int64_t kBatch = 32, kSeq = 128;

void set_flops(benchmark::State& state, double flops_per_iteration) {
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops_per_iteration * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// linear: x [rows, in] . W^T [in, out] + b, the projections and the FFN.
void BM_Linear(benchmark::State& state) {
  const int64_t rows = state.range(0), in = state.range(1), out = state.range(2);
  const bool bf16 = state.range(3) != 0;
  Generator g(1);
  Tensor x = randn({rows, in}, g), w = randn({out, in}, g), b = randn({out}, g);
  set_matmul_precision(bf16 ? MatmulPrecision::bf16 : MatmulPrecision::f32);
  for (auto _ : state) benchmark::DoNotOptimize(linear(x, w, b));
  set_matmul_precision(MatmulPrecision::f32);
  set_flops(state, 2.0 * rows * in * out);
}

// The reference kernel on the same linear (fewer rows: it is slow; the rate compares).
void BM_LinearReference(benchmark::State& state) {
  const int64_t rows = state.range(0), in = state.range(1), out = state.range(2);
  Generator g(1);
  Tensor x = randn({rows, in}, g), w = randn({out, in}, g), b = randn({out}, g);
  Tensor y = Tensor::empty({rows, out});
  for (auto _ : state) {
    matmul_reference<float>(x, w.transpose(0, 1), b, y);
    benchmark::DoNotOptimize(y.raw_data());
  }
  set_flops(state, 2.0 * rows * in * out);
}

// Attention scores q k^T with q, k as [B, T, h, d] viewed as [B, h, T, d] (strided, no copy).
void BM_AttentionScores(benchmark::State& state) {
  const int64_t heads = state.range(0), d = 64;
  Generator g(2);
  Tensor q = randn({kBatch, kSeq, heads, d}, g).permute({0, 2, 1, 3});
  Tensor k = randn({kBatch, kSeq, heads, d}, g).permute({0, 2, 3, 1});
  for (auto _ : state) benchmark::DoNotOptimize(matmul(q, k));
  set_flops(state, 2.0 * kBatch * heads * kSeq * kSeq * d);
}

void BM_AttentionScoresReference(benchmark::State& state) {
  const int64_t heads = state.range(0), d = 64, batch = 2;
  Generator g(2);
  Tensor q = randn({batch, kSeq, heads, d}, g).permute({0, 2, 1, 3});
  Tensor k = randn({batch, kSeq, heads, d}, g).permute({0, 2, 3, 1});
  Tensor s = Tensor::empty({batch, heads, kSeq, kSeq});
  for (auto _ : state) {
    matmul_reference<float>(q, k, Tensor(), s);
    benchmark::DoNotOptimize(s.raw_data());
  }
  set_flops(state, 2.0 * batch * heads * kSeq * kSeq * d);
}

constexpr int64_t kRows = kBatch * kSeq;
constexpr int64_t kRefRows = 256;

}  // namespace

// {rows, in, out, bf16}
BENCHMARK(BM_Linear)
    ->ArgNames({"rows", "in", "out", "bf16"})
    ->Args({kRows, 256, 256, 0})
    ->Args({kRows, 256, 1024, 0})
    ->Args({kRows, 1024, 256, 0})
    ->Args({kRows, 768, 768, 0})
    ->Args({kRows, 768, 3072, 0})
    ->Args({kRows, 3072, 768, 0})
    ->Args({kRows, 768, 3072, 1})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LinearReference)
    ->ArgNames({"rows", "in", "out"})
    ->Args({kRefRows, 256, 1024})
    ->Args({kRefRows, 768, 3072})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AttentionScores)->ArgName("heads")->Arg(4)->Arg(12)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AttentionScoresReference)->ArgName("heads")->Arg(4)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
