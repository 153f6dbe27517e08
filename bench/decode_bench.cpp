// Decoding speed with and without the KV cache, on the shapes the shipped configs train: a
// GPT like configs/gpt_lm.yaml continuing a prompt greedily, and an encoder-decoder like
// configs/seq2seq_g2p.yaml in beam search. Without the cache every step runs the whole
// prefix again (the reference); with it, a step runs only the new token. Random weights and
// no end token, so that every run decodes the same number of tokens.
//   build/bench/bench_decode [--new-tokens 100 --beams 4 --repeats 3]
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <functional>

#include "autograd/ops.h"
#include "autograd/random.h"
#include "decode/generation.h"
#include "nn/models/encoder_decoder.h"
#include "nn/models/gpt.h"

using namespace heed;
using namespace heed::decode;

namespace {

// The fastest of `repeats` runs, in seconds.
double best_seconds(int repeats, const std::function<void()>& run) {
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    run();
    best = std::min(
        best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

void report(const char* what, int64_t tokens, double plain, double cached) {
  std::printf(
      "%-34s %4ld tokens: recompute %7.3f s (%6.0f tok/s), KV cache %7.3f s (%6.0f tok/s): %.1fx\n",
      what, static_cast<long>(tokens), plain, tokens / plain, cached, tokens / cached,
      plain / cached);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("decoding benchmark: KV cache against recomputing the prefix");
  int64_t new_tokens = 100, beams = 4, prompt = 8;
  int repeats = 3;
  app.add_option("--new-tokens", new_tokens, "GPT tokens to generate");
  app.add_option("--prompt", prompt, "GPT prompt length");
  app.add_option("--beams", beams, "beams for the encoder-decoder");
  app.add_option("--repeats", repeats, "runs of each; the fastest counts");
  CLI11_PARSE(app, argc, argv);

  nn::GPT2Config g;
  g.vocab_size = 8192;
  g.n_positions = 128;
  g.n_embd = 256;
  g.n_layer = 4;
  g.n_head = 4;
  nn::GPT gpt(g, 1);
  gpt.eval();
  Generator ids(2);
  std::vector<int32_t> prompt_ids;
  for (int64_t i = 0; i < prompt; ++i) prompt_ids.push_back(5 + ids.next_below(g.vocab_size - 5));
  GenerationOptions greedy;
  greedy.greedy = true;
  greedy.max_new_tokens = std::min(new_tokens, g.n_positions - prompt);
  std::vector<int32_t> plain_out, cached_out;
  const double gpt_plain = best_seconds(repeats, [&] {
    GptNextToken next(gpt, /*use_cache=*/false);
    plain_out = generate(next, prompt_ids, greedy).tokens;
  });
  const double gpt_cached = best_seconds(repeats, [&] {
    GptNextToken next(gpt);
    cached_out = generate(next, prompt_ids, greedy).tokens;
  });
  report("GPT 4x256, greedy", greedy.max_new_tokens, gpt_plain, gpt_cached);
  if (plain_out != cached_out) std::printf("  (the two outputs differ)\n");

  nn::BartConfig b;
  b.vocab_size = 90;
  b.max_position_embeddings = 64;
  b.d_model = 256;
  b.encoder_layers = b.decoder_layers = 3;
  b.encoder_attention_heads = b.decoder_attention_heads = 4;
  b.encoder_ffn_dim = b.decoder_ffn_dim = 1024;
  nn::EncoderDecoder bart(b, 3);
  bart.eval();
  const std::vector<int32_t> source{10, 11, 12, 13, 14, 15, 16, 17, 18, 19};
  BeamSearchOptions beam;
  beam.num_beams = beams;
  beam.max_new_tokens = 40;
  const std::vector<int32_t> start{static_cast<int32_t>(b.decoder_start_token_id)};
  const double bart_plain = best_seconds(repeats, [&] {
    Seq2SeqNextToken next(bart, source, /*use_cache=*/false);
    plain_out = beam_search(next, start, beam).best.tokens;
  });
  const double bart_cached = best_seconds(repeats, [&] {
    Seq2SeqNextToken next(bart, source);
    cached_out = beam_search(next, start, beam).best.tokens;
  });
  report("encoder-decoder 3+3x256, beam", beam.max_new_tokens, bart_plain, bart_cached);
  if (plain_out != cached_out) std::printf("  (the two outputs differ)\n");
  std::printf("threads %d\n", num_threads());
  return 0;
}
