// One attention layer's forward and backward, the fused (flash_attention) and the unfused path
// side by side, at sequence lengths where the choice between them is made: the measurements
// behind nn/attention.cpp's fused_attention_pays. Run:
//   build/bench/bench_attention --seq 128,256,512,1024,2048 [--causal] [--dropout 0.1] [--bf16]
// Heads as BERT-base's (12 x 64) by default, split from [B, T, h, d] as the layers split them.
// Prints per path the median forward and backward milliseconds and the memory held between them
// (saved for backward, output included).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "autograd/allocator.h"
#include "autograd/ops.h"
#include "autograd/random.h"
#include "nn/attention.h"

using namespace heed;

namespace {

struct Timing {
  double forward_ms, backward_ms, held_mb;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

Timing measure(nn::AttentionKernel kernel, int64_t batch, int64_t heads, int64_t seq, int64_t dim,
               bool causal, double dropout, int repeats) {
  Generator init(1);
  auto heads_of = [&] {
    Tensor t = randn({batch, seq, heads, dim}, init);
    t.set_requires_grad(true);
    return t;
  };
  Tensor q = heads_of(), k = heads_of(), v = heads_of();
  // A padding mask as a batch of real sequences carries one (every key kept: the cost is the same).
  const Tensor mask = nn::padding_mask_for_attention(ones({batch, seq}, DType::u8));
  Generator drop(2);
  std::vector<double> forward, backward, held;
  using Clock = std::chrono::steady_clock;
  for (int r = 0; r <= repeats; ++r) {  // the first is warm-up
    const size_t before = allocator_stats().allocated_bytes;
    const auto t0 = Clock::now();
    Tensor out = nn::scaled_dot_product_attention(q.permute({0, 2, 1, 3}), k.permute({0, 2, 1, 3}),
                                                  v.permute({0, 2, 1, 3}),
                                                  {.mask = mask,
                                                   .causal = causal,
                                                   .dropout_p = dropout,
                                                   .training = dropout > 0.0,
                                                   .generator = &drop,
                                                   .kernel = kernel});
    const auto t1 = Clock::now();
    const size_t after = allocator_stats().allocated_bytes;
    out.backward(ones(out.shape()));
    const auto t2 = Clock::now();
    if (r == 0) continue;
    forward.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    backward.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
    held.push_back(static_cast<double>(after - before) / (1 << 20));
    q.zero_grad();
    k.zero_grad();
    v.zero_grad();
  }
  return {median(forward), median(backward), median(held)};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Fused against unfused attention, forward and backward"};
  std::vector<int64_t> seqs{128, 256, 512, 1024, 2048};
  int64_t batch = 0, heads = 12, dim = 64;
  bool causal = false, bf16 = false;
  double dropout = 0.0;
  int repeats = 5, threads = 0;
  std::string only;
  app.add_option("--seq", seqs, "sequence lengths")->delimiter(',');
  app.add_option("--batch", batch, "sequences (0: 4,096 tokens' worth, at least 1)");
  app.add_option("--heads", heads, "heads");
  app.add_option("--dim", dim, "head size");
  app.add_flag("--causal", causal, "causal mask");
  app.add_option("--dropout", dropout, "dropout on the probabilities (training)");
  app.add_flag("--bf16", bf16, "bf16 matrix products");
  app.add_option("--repeats", repeats, "timed repeats (median)");
  app.add_option("--threads", threads, "0: OpenMP's default");
  app.add_option("--only", only, "fused or unfused: run that path alone (for a profiler)")
      ->check(CLI::IsMember({"fused", "unfused"}));
  CLI11_PARSE(app, argc, argv);
  if (threads > 0) set_num_threads(threads);
  set_matmul_precision(bf16 ? MatmulPrecision::bf16 : MatmulPrecision::f32);
  std::printf("%6s %5s | %28s | %28s | %s\n", "seq", "batch", "unfused fwd / bwd ms, MB",
              "fused fwd / bwd ms, MB", "fused speed-up");
  for (int64_t seq : seqs) {
    const int64_t b = batch > 0 ? batch : std::max<int64_t>(1, 4096 / seq);
    auto run = [&](nn::AttentionKernel kernel, const char* name) {
      if (!only.empty() && only != name) return Timing{0, 0, 0};
      return measure(kernel, b, heads, seq, dim, causal, dropout, repeats);
    };
    const Timing u = run(nn::AttentionKernel::unfused, "unfused");
    const Timing f = run(nn::AttentionKernel::fused, "fused");
    std::printf("%6ld %5ld | %8.2f %8.2f %9.1f | %8.2f %8.2f %9.1f | %.2fx\n", seq, b, u.forward_ms,
                u.backward_ms, u.held_mb, f.forward_ms, f.backward_ms, f.held_mb,
                (u.forward_ms + u.backward_ms) / (f.forward_ms + f.backward_ms));
  }
  return 0;
}
