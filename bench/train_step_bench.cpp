// The heed side of bench/compare.py: trains one model for a fixed number of steps through
// train::train_step, the function `train` runs (forward, backward, clipping at 1.0, AdamW), on
// synthetic batches, and prints `key: value` lines, `tokens_per_second` last.
//   build/bench/bench_train_step --model bert-mini|gpt-mini|bert-small|seq2seq|bert-base|gpt2
//                                --precision f32|bf16 --steps 10 [--threads 2]
//   build/bench/bench_train_step --model bert-base --batch 1 --seq 8192   (up to 8,192 tokens:
//                                         the position tables grow to the sequence)
//   mpirun -np 2 build/bench/bench_train_step --model bert-mini --threads 1   (data parallel:
//                                         the same global batch, plus the allreduce's cost)
//   build/bench/bench_train_step --model bert-mini --batch 8 --seq 512   (another batch shape:
//                                         the comparison's are the defaults)
//   build/bench/bench_train_step --model bert-mini --gradient-checkpointing   (recomputation)
//   build/bench/bench_train_step --matmul-peak --precision f32|bf16   (oneDNN's peak here)
// With HEED_PROFILE=1 it also prints, on stderr, the time of each op over the timed steps.
#include <sys/resource.h>
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <dnnl.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "autograd/allocator.h"
#include "autograd/generator.h"
#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "autograd/random.h"
#include "base/profile.h"
#include "nn/models/bert.h"
#include "nn/models/encoder_decoder.h"
#include "nn/models/gpt.h"
#include "nn/padded_rows.h"
#include "train/distributed/data_parallel.h"
#include "train/run/train_step.h"

using namespace heed;

namespace {

using Clock = std::chrono::steady_clock;

// A model of the comparison and the shape of its batches.
struct Workload {
  std::string task;  // the config's name of it: mlm, clm or seq2seq
  int64_t vocab = 8192, hidden = 256, layers = 4, heads = 4, ffn = 1024;
  int64_t batch = 32, seq = 128;
  // The position table: at least the sequence (max(positions, seq) is built), as a
  // pretrained checkpoint's 512 or 1,024 positions would be extended to train longer.
  int64_t positions = 0;
  int64_t target_seq = 0;  // seq2seq: decoder length (seq is the source length)
  double label_smoothing = 0.0;
};

Workload workload(const std::string& name) {
  if (name == "bert-mini") return {.task = "mlm"};
  if (name == "gpt-mini") return {.task = "clm"};
  if (name == "bert-small") {
    return {.task = "mlm", .hidden = 512, .heads = 8, .ffn = 2048, .batch = 16};
  }
  // The tutorials' sizes: BERT-base as bert-base-uncased (vocabulary 30,522, 512 positions)
  // and GPT-2 small (vocabulary 50,257, 1,024 positions), at the batch shapes their users
  // pretrain at: 16 x 128 and 4 x 1,024.
  if (name == "bert-base") {
    return {.task = "mlm",
            .vocab = 30522,
            .hidden = 768,
            .layers = 12,
            .heads = 12,
            .ffn = 3072,
            .batch = 16,
            .seq = 128,
            .positions = 512};
  }
  if (name == "gpt2") {
    return {.task = "clm",
            .vocab = 50257,
            .hidden = 768,
            .layers = 12,
            .heads = 12,
            .ffn = 3072,
            .batch = 4,
            .seq = 1024,
            .positions = 1024};
  }
  if (name == "seq2seq") {  // shaped like configs/seq2seq_g2p.yaml: characters, short words
    return {.task = "seq2seq",
            .vocab = 64,
            .layers = 3,
            .batch = 128,
            .seq = 32,
            .target_seq = 32,
            .label_smoothing = 0.1};
  }
  throw std::invalid_argument("--model: unknown '" + name +
                              "' (bert-mini, gpt-mini, bert-small, seq2seq, bert-base or gpt2)");
}

std::shared_ptr<nn::PretrainedModel> build(const Workload& w) {
  constexpr double kDropout = 0.1;
  if (w.task == "mlm") {
    nn::BertConfig c{.vocab_size = w.vocab,
                     .hidden_size = w.hidden,
                     .num_hidden_layers = w.layers,
                     .num_attention_heads = w.heads,
                     .intermediate_size = w.ffn,
                     .hidden_dropout_prob = kDropout,
                     .attention_probs_dropout_prob = kDropout,
                     .max_position_embeddings = std::max(w.positions, w.seq)};
    return std::make_shared<nn::BertForMaskedLM>(c, 1);
  }
  if (w.task == "clm") {
    nn::GPT2Config c{.vocab_size = w.vocab,
                     .n_positions = std::max(w.positions, w.seq),
                     .n_embd = w.hidden,
                     .n_layer = w.layers,
                     .n_head = w.heads,
                     .n_inner = w.ffn,
                     .resid_pdrop = kDropout,
                     .embd_pdrop = kDropout,
                     .attn_pdrop = kDropout};
    return std::make_shared<nn::GPT>(c, 1);
  }
  nn::BartConfig c{.vocab_size = w.vocab,
                   .max_position_embeddings = std::max(w.seq, w.target_seq),
                   .d_model = w.hidden,
                   .encoder_layers = w.layers,
                   .decoder_layers = w.layers,
                   .encoder_attention_heads = w.heads,
                   .decoder_attention_heads = w.heads,
                   .encoder_ffn_dim = w.ffn,
                   .decoder_ffn_dim = w.ffn,
                   .dropout = kDropout,
                   .attention_dropout = kDropout};
  return std::make_shared<nn::EncoderDecoder>(c, 1);
}

// A batch as the task's collator shapes it, from random ids (no padding).
data::Batch synthetic_batch(const Workload& w, Generator& g) {
  data::Batch b;
  b.batch_size = w.batch;
  b.seq_len = w.seq;
  const int64_t n = w.batch * w.seq;
  const auto token = [&] { return 5 + static_cast<int64_t>(g.next_below(w.vocab - 5)); };
  for (int64_t i = 0; i < n; ++i) b.input_ids.push_back(token());
  b.attention_mask.assign(n, 1);
  b.token_type_ids.assign(n, 0);
  if (w.task == "mlm") {
    // Exactly 15% of the positions predicted, at random places: every batch then has the
    // same shapes, as in bench/pytorch_train_step.py.
    b.label_len = w.seq;
    b.labels.assign(n, -100);
    std::vector<int64_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    for (int64_t i = n - 1; i > 0; --i) {
      std::swap(order[i], order[g.next_below(static_cast<uint64_t>(i) + 1)]);
    }
    const int64_t labelled = std::llround(0.15 * static_cast<double>(n));
    for (int64_t i = 0; i < labelled; ++i) b.labels[order[i]] = b.input_ids[order[i]];
  } else if (w.task == "clm") {  // labels[t] = input_ids[t + 1]
    b.label_len = w.seq;
    for (int64_t i = 0; i < n; ++i) {
      b.labels.push_back((i + 1) % w.seq == 0 ? -100 : b.input_ids[i + 1]);
    }
  } else {
    b.decoder_seq_len = b.label_len = w.target_seq;
    for (int64_t i = 0; i < w.batch * w.target_seq; ++i) b.labels.push_back(token());
    for (int64_t r = 0; r < w.batch; ++r) {  // the decoder input: labels shifted right
      b.decoder_input_ids.push_back(2);
      for (int64_t t = 0; t + 1 < w.target_seq; ++t) {
        b.decoder_input_ids.push_back(b.labels[r * w.target_seq + t]);
      }
    }
    b.decoder_attention_mask.assign(w.batch * w.target_seq, 1);
  }
  b.num_target_tokens = std::ranges::count_if(b.labels, [](int64_t l) { return l != -100; });
  return b;
}

// Multiply-adds of one token through the model's matrix products, and the forward +
// backward FLOPs of a step (2 per multiply-add, x3 for the two products of backward). The
// MLM head runs on the labelled rows only, as the trainer runs it. `executed`: the FLOPs heed
// runs, where the last MLM layer's output projection and feed-forward run on the labelled
// rows alone, and its query projection and attention on the block of queries it picks per
// sequence (query_fraction of them); otherwise the model's FLOPs as a plain implementation
// runs them (PyTorch's side prints the same), which the comparison checks for equal work.
double flops_per_step(const Workload& w, double labelled_fraction, double query_fraction,
                      bool executed) {
  const double H = w.hidden, I = w.ffn, V = w.vocab, B = w.batch, T = w.seq;
  const double layer = 4 * H * H + 2 * H * I;
  const double attention = 2 * B * T * T * H;  // QK^T and PV, per layer
  if (w.task == "mlm") {
    const double head = labelled_fraction * (H * H + H * V);
    const double skipped =
        executed ? (1 - labelled_fraction) * (H * H + 2 * H * I) + (1 - query_fraction) * H * H
                 : 0.0;
    const double attention_skipped = executed ? (1 - query_fraction) * attention : 0.0;
    return 6 *
           (B * T * (w.layers * layer + head - skipped) + w.layers * attention - attention_skipped);
  }
  if (w.task == "clm") return 6 * (B * T * (w.layers * layer + H * V) + w.layers * attention);
  const double Tt = w.target_seq;
  const double encoder = B * T * layer + attention;
  // Decoder: self-attention, cross-attention (q and out on the target, k and v on the source),
  // feed-forward; and the head at every target position.
  const double decoder = B * Tt * (6 * H * H + 2 * H * I) + B * T * 2 * H * H +
                         2 * B * Tt * Tt * H + 2 * B * Tt * T * H;
  return 6 * (w.layers * (encoder + decoder) + B * Tt * H * V);
}

// The queries per sequence that BERT's last layer attends from under a masked-LM head: the
// block MultiHeadAttention picks for the most labelled positions in a sequence of the batch.
int64_t picked_queries(const data::Batch& b) {
  int64_t most = 0;
  for (int64_t r = 0; r < b.batch_size; ++r) {
    const auto row = b.labels.begin() + r * b.label_len;
    most = std::max<int64_t>(
        most, std::count_if(row, row + b.label_len, [](int64_t l) { return l != -100; }));
  }
  return nn::picked_query_block(most, b.seq_len);
}

double median(std::vector<double> v) {
  std::ranges::sort(v);
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// GFLOP/s of a large product of this precision through the same path the models take, and
// the kernel oneDNN picks for it.
int matmul_peak(bool bf16) {
  const int64_t M = 4096, K = 1024, N = 1024;
  Generator g(3);
  const Tensor a0 = randn({M, K}, g), b0 = randn({K, N}, g);
  const Tensor a = bf16 ? a0.to(DType::bf16) : a0, b = bf16 ? b0.to(DType::bf16) : b0;
  NoGradGuard no_grad;
  std::vector<double> seconds;
  for (int i = 0; i < 12; ++i) {
    const auto start = Clock::now();
    Tensor c = matmul(a, b);
    seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  seconds.erase(seconds.begin(), seconds.begin() + 2);
  using dt = dnnl::memory::data_type;
  const dt in = bf16 ? dt::bf16 : dt::f32;
  const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  const auto md = [](int64_t r, int64_t c, dt t) {
    return dnnl::memory::desc({r, c}, t, dnnl::memory::format_tag::ab);
  };
  const dnnl::matmul::primitive_desc pd(
      dnnl::matmul::desc(md(M, K, in), md(K, N, in), md(M, N, dt::f32)), engine);
  std::printf("matmul_shape: %ld x %ld x %ld\n", M, K, N);
  std::printf("onednn_isa: %s\n", pd.impl_info_str());
  std::printf("matmul_gflops: %.1f\n", 2.0 * M * K * N / median(seconds) * 1e-9);
  return 0;
}

}  // namespace

// The gradients' sums with no backward running: every bucket started at once, then waited
// for. The same span a step's reduction.wait_seconds measures, which is what backward did not
// hide of it (packing and unpacking the buckets are outside both).
std::vector<double> time_sums_alone(train::DataParallel& parallel, int64_t repeats) {
  std::vector<double> seconds;
  for (int64_t k = 0; k < repeats; ++k) {
    parallel.world().barrier();
    parallel.reducer().prepare();
    seconds.push_back(parallel.reducer().finish().wait_seconds);
  }
  return seconds;
}

int main(int argc, char** argv) {
  CLI::App app("heed training-step benchmark (the heed side of bench/compare.py)");
  std::string model_name = "bert-mini", precision = "f32";
  int64_t steps = 10, warmup = 2, threads = 0, batch = 0, seq = 0;
  bool peak = false, recompute = false;
  double bucket_mb = 25;
  app.add_option("--model", model_name,
                 "bert-mini, gpt-mini, bert-small, seq2seq, bert-base or gpt2");
  app.add_option("--precision", precision, "f32 or bf16 (train.dtype)")
      ->check(CLI::IsMember({"f32", "bf16"}));
  app.add_option("--steps", steps, "timed steps")->check(CLI::PositiveNumber);
  app.add_option("--warmup", warmup, "untimed steps first")->check(CLI::NonNegativeNumber);
  app.add_option("--threads", threads, "0: OpenMP's default");
  app.add_option("--batch", batch, "sequences per batch (default: the model's in compare.py)")
      ->check(CLI::PositiveNumber);
  app.add_option(
         "--seq", seq,
         "tokens per sequence, the source's for seq2seq (default: the model's in compare.py)")
      ->check(CLI::PositiveNumber);
  app.add_option("--bucket-mb", bucket_mb, "under mpirun: gradient bucket size (train.bucket_mb)");
  app.add_flag("--gradient-checkpointing", recompute,
               "recompute each layer in backward (train.gradient_checkpointing)");
  app.add_flag("--matmul-peak", peak, "print oneDNN's matmul GFLOP/s and kernel, and exit");
  CLI11_PARSE(app, argc, argv);
  if (threads > 0) set_num_threads(static_cast<int>(threads));
  const bool bf16 = precision == "bf16";
  // As `train` does: without native bf16 products (an AVX2-only CPU), bf16 runs as f32.
  const bool bf16_runs = bf16 && native_bf16_products();
  if (peak && bf16 && !bf16_runs) {
    std::fprintf(stderr, "bench_train_step: no bf16 matrix products on this CPU: no bf16 peak\n");
    return 3;
  }
  if (peak) return matmul_peak(bf16);
  if (bf16 && !bf16_runs) {
    std::fprintf(stderr, "bench_train_step: no bf16 matrix products on this CPU: running f32\n");
  }
  if (bf16_runs) set_matmul_precision(MatmulPrecision::bf16);

  Workload w;
  try {
    w = workload(model_name);
    if (batch > 0) w.batch = batch;
    if (seq > 0) w.seq = seq;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_train_step: %s\n", e.what());
    return 2;
  }
  std::shared_ptr<nn::PretrainedModel> model = build(w);
  model->train();
  model->set_gradient_checkpointing(recompute);
  std::unique_ptr<optim::Optimizer> optimizer = train::make_optimizer(
      {.name = train::OptimizerName::kAdamW, .lr = 1e-4, .weight_decay = 0.01}, *model);
  Generator g(2);
  std::vector<data::Batch> batches;
  for (int i = 0; i < 4; ++i) batches.push_back(synthetic_batch(w, g));
  // Under mpirun, the trainer's data parallelism: each rank takes its rows of the same global
  // batches, and the gradients are summed while backward runs.
  const train::World& world = train::World::get();
  double labelled = 0, positions = 0, queries = 0;
  for (const data::Batch& b : batches) {
    labelled += static_cast<double>(b.num_target_tokens);
    positions += static_cast<double>(b.batch_size * b.seq_len);
    // Each rank picks its block of queries from its own rows (DataParallel::rows' split).
    const int64_t n = world.size();
    for (int64_t r = 0; r < n; ++r) {
      const data::Batch part =
          data::batch_rows(b, b.batch_size * r / n, b.batch_size * (r + 1) / n);
      queries += static_cast<double>(part.batch_size * picked_queries(part));
    }
  }
  std::unique_ptr<train::DataParallel> parallel;
  if (world.distributed()) {
    parallel = std::make_unique<train::DataParallel>(world, *model, *optimizer,
                                                     train::TrainConfig{.bucket_mb = bucket_mb});
    parallel->broadcast_parameters();
  }
  size_t next = 0;
  const auto next_batch = [&] {
    const data::Batch& b = batches[next++ % batches.size()];
    return parallel ? parallel->rows(b) : b;
  };
  const train::StepOptions options{
      .max_grad_norm = 1.0, .label_smoothing = w.label_smoothing, .sync = parallel.get()};

  std::vector<double> forward, backward, update, total, reduce_wait;
  double loss = 0;
  AllocatorStats before_timed{};
  for (int64_t s = 0; s < warmup + steps; ++s) {
    if (s == warmup) {
      before_timed = allocator_stats();
      reset_op_times();
    }
    const auto start = Clock::now();
    train::StepOutcome o =
        train::train_step(train::task_for(w.task), *model, *optimizer, next_batch, options);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (s < warmup) continue;
    forward.push_back(o.seconds.forward);
    backward.push_back(o.seconds.backward);
    update.push_back(o.seconds.optimizer);
    reduce_wait.push_back(o.reduction.wait_seconds);
    total.push_back(seconds);
    loss = o.loss;
  }
  const std::vector<double> reduce_alone =
      parallel ? time_sums_alone(*parallel, steps) : std::vector<double>{};
  if (!world.is_main()) return 0;  // rank 0 reports for the job
  const int64_t tokens = w.batch * (w.seq + w.target_seq);
  int64_t parameters = 0;
  for (const Tensor& p : model->parameters()) parameters += p.numel();
  std::printf("framework: heed\nmodel: %s\nprecision: %s\nthreads: %d\n", model_name.c_str(),
              precision.c_str(), num_threads());
  std::printf("products_in: %s\n", bf16_runs ? "bf16" : "f32");
  std::printf("tokens_per_step: %ld\n", tokens);
  std::printf("model_flops_per_step: %.0f\n",
              flops_per_step(w, labelled / positions, queries / positions, false));
  std::printf("flops_per_step: %.0f\n",
              flops_per_step(w, labelled / positions, queries / positions, true));
  std::printf("parameters: %ld\n", parameters);
  std::printf("forward_ms: %.2f\nbackward_ms: %.2f\noptimizer_ms: %.2f\nstep_ms: %.2f\n",
              1e3 * median(forward), 1e3 * median(backward), 1e3 * median(update),
              1e3 * median(total));
  // In steady state every block a step asks for should come from the allocator's cache.
  const AllocatorStats after_timed = allocator_stats();
  std::printf("os_allocations_per_step: %.1f\n",
              static_cast<double>(after_timed.os_allocations - before_timed.os_allocations) /
                  static_cast<double>(steps));
  std::printf("loss: %.4f\n", loss);
  if (parallel) {
    std::printf("ranks: %d\nallreduce_buckets: %ld\nallreduce_bytes_per_step: %ld\n", world.size(),
                static_cast<long>(parallel->reducer().num_buckets()),
                static_cast<long>(parameters * 4));
    // The sums' cost with nothing to hide behind, and what the step waited for them.
    std::printf("allreduce_alone_ms: %.2f\nallreduce_wait_ms: %.2f\n", 1e3 * median(reduce_alone),
                1e3 * median(reduce_wait));
  }
  // This process's peak resident set (the kernel's high-water mark, in KiB on Linux): what
  // `train`'s memory estimate is checked against.
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf("peak_rss_mb: %.0f\n", static_cast<double>(usage.ru_maxrss) * 1024 / 1e6);
  if (profiling()) std::fprintf(stderr, "%s", op_time_report().c_str());  // HEED_PROFILE=1
  std::printf("tokens_per_second: %.1f\n", tokens / median(total));
  return 0;
}
