// Tokens per second of one BERT masked-LM training step (forward + backward) on heed, for
// comparison with bench/pytorch_bert_step.py doing the same work in PyTorch.
//   build/bench/bench_train_step [--hidden 256 --layers 4 --heads 4 --batch 32 --seq 128]
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>

#include "autograd/allocator.h"
#include "autograd/ops.h"
#include "autograd/random.h"
#include "nn/models/bert.h"

using namespace heed;

int main(int argc, char** argv) {
  CLI::App app("BERT MLM training step benchmark");
  int64_t hidden = 256, layers = 4, heads = 4, batch = 32, seq = 128, vocab = 8192, steps = 10;
  bool bf16 = false, dense_head = false;
  app.add_option("--hidden", hidden);
  app.add_option("--layers", layers);
  app.add_option("--heads", heads);
  app.add_option("--batch", batch);
  app.add_option("--seq", seq);
  app.add_option("--vocab", vocab);
  app.add_option("--steps", steps);
  app.add_flag("--bf16", bf16, "bf16 matrix products with f32 accumulation");
  app.add_flag("--dense-head", dense_head,
               "run the MLM head on every position (as Hugging Face does), not only the masked");
  CLI11_PARSE(app, argc, argv);
  if (bf16) set_matmul_precision(MatmulPrecision::bf16);

  nn::BertConfig c;
  c.vocab_size = vocab;
  c.hidden_size = hidden;
  c.num_hidden_layers = layers;
  c.num_attention_heads = heads;
  c.intermediate_size = 4 * hidden;
  c.max_position_embeddings = seq;
  nn::BertForMaskedLM model(c, 1);
  Generator g(2);
  std::vector<int64_t> ids(batch * seq), labels(batch * seq, -100);
  for (size_t i = 0; i < ids.size(); ++i) {
    ids[i] = 5 + g.next_below(vocab - 5);
    if (g.next_double() < 0.15) labels[i] = ids[i];
  }
  nn::ModelInputs in{.input_ids = from_vector<int64_t>(ids, {batch, seq}),
                     .attention_mask = ones({batch, seq}, DType::i64),
                     .labels = from_vector<int64_t>(labels, {batch, seq}),
                     .only_labeled_logits = !dense_head};
  auto step = [&] {
    model.zero_grad();
    nn::ModelOutputs out = model.forward(in);
    out.loss.backward();
    return out.loss.item();
  };
  step();  // warm-up: primitives, allocator cache
  const AllocatorStats before = allocator_stats();
  const auto start = std::chrono::steady_clock::now();
  double loss = 0;
  for (int64_t s = 0; s < steps; ++s) loss = step();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double tokens_per_s = static_cast<double>(batch * seq * steps) / seconds;
  const AllocatorStats after = allocator_stats();
  // Matmul FLOPs of forward + backward: 6 * (weights multiplied) per token, plus attention;
  // the MLM head (transform + decoder) runs on the masked 15% unless --dense-head.
  const double layer_matmul = 4.0 * hidden * hidden + 2.0 * hidden * 4 * hidden;
  const double head_share = dense_head ? 1.0 : 0.15;
  const double flops_per_token = 6.0 * layers * layer_matmul +
                                 6.0 * head_share * (hidden * hidden + vocab * hidden) +
                                 6.0 * layers * 2 * seq * hidden;
  std::printf(
      "heed BERT-MLM step: hidden %ld, layers %ld, batch %ld x %ld: %.3f s/step, %.0f "
      "tokens/s, %.1f GFLOP/s (loss %.4f, threads %d)\n",
      hidden, layers, batch, seq, seconds / steps, tokens_per_s,
      tokens_per_s * flops_per_token * 1e-9, loss, num_threads());
  // In steady state every block a step asks for should come from the cache.
  std::printf(
      "allocator: %lu blocks from the OS over %ld timed steps (%lu cache hits); %.1f MB "
      "cached\n",
      static_cast<unsigned long>(after.os_allocations - before.os_allocations),
      static_cast<long>(steps), static_cast<unsigned long>(after.cache_hits - before.cache_hits),
      after.cached_bytes / 1e6);
  return 0;
}
