// Encoding throughput of heed's tokenizers, one thread, in MB/s of input text: WordPiece,
// GPT-2's byte-level BPE and a SentencePiece model, each over the same corpus, one encode call
// per line. bench/tokenizer_baselines.js (tiktoken) and bench/tokenizer_spm.py (the
// SentencePiece library's Python bindings) give their libraries the same strings, and
// bench/compare_tokenizers.sh runs them against this.
//   build/bench/bench_tokenizer [--benchmark_filter=ByteLevelBpe]
// Run from the repository root. The files, and the variables that point elsewhere:
//   HEED_BENCH_CORPUS  datasets/pretrain/train.txt (scripts/prepare_data.sh)
//   HEED_BENCH_VOCAB   datasets/vocab.txt, WordPiece (configs/gpt_lm.yaml trains it)
//   HEED_BENCH_GPT2    tests/data/gpt2, GPT-2's vocab.json and merges.txt
//   HEED_BENCH_SPM     datasets/spm8000.model (bench/compare_tokenizers.sh trains it)
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "data/byte_level_bpe.h"
#include "data/sentencepiece_tokenizer.h"
#include "data/wordpiece.h"

namespace {

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v ? v : fallback;
}

struct Corpus {
  std::vector<std::string> lines;  // without their "\n"
  size_t bytes = 0;                // of the lines and their line ends
};

// Read once for all benchmarks of a run.
const Corpus& corpus() {
  static const Corpus loaded = [] {
    const std::string path = env_or("HEED_BENCH_CORPUS", "datasets/pretrain/train.txt");
    std::ifstream in(path);
    HEED_CHECK(in.good(), "cannot read the corpus {} (scripts/prepare_data.sh makes it)", path);
    Corpus c;
    for (std::string line; std::getline(in, line);) {
      c.bytes += line.size() + 1;
      c.lines.push_back(std::move(line));
    }
    return c;
  }();
  return loaded;
}

// Encodes every line once untimed, so that the timed passes find the file in memory and any
// cache warm, then once per iteration. `load` makes the tokenizer; `encode` gives a line's ids.
template <typename Load, typename Encode>
void encode_corpus(benchmark::State& state, Load load, Encode encode) {
  try {
    const Corpus& text = corpus();
    const auto tokenizer = load();
    size_t tokens = 0;
    for (const std::string& line : text.lines) tokens += encode(tokenizer, line).size();
    for (auto _ : state) {
      tokens = 0;
      for (const std::string& line : text.lines) tokens += encode(tokenizer, line).size();
      benchmark::DoNotOptimize(tokens);
    }
    state.SetBytesProcessed(static_cast<int64_t>(text.bytes) * state.iterations());
    state.counters["tokens"] = static_cast<double>(tokens);
    state.counters["lines"] = static_cast<double>(text.lines.size());
    state.counters["MB"] = static_cast<double>(text.bytes) / 1e6;
  } catch (const heed::Error& e) {
    state.SkipWithError(e.what());
  }
}

void BM_WordPieceEncodeCorpus(benchmark::State& state) {
  encode_corpus(
      state,
      [] {
        return heed::data::WordPieceTokenizer::from_file(
            env_or("HEED_BENCH_VOCAB", "datasets/vocab.txt"));
      },
      [](const auto& tok, const std::string& line) { return tok.encode_ids(line); });
}

void BM_ByteLevelBpeEncodeCorpus(benchmark::State& state) {
  encode_corpus(
      state,
      [] {
        const std::string dir = env_or("HEED_BENCH_GPT2", "tests/data/gpt2");
        return heed::data::ByteLevelBpe::load(dir + "/vocab.json", dir + "/merges.txt");
      },
      [](const auto& tok, const std::string& line) { return tok.encode(line); });
}

void BM_SentencePieceEncodeCorpus(benchmark::State& state) {
  encode_corpus(
      state,
      [] {
        return heed::data::SentencePieceTokenizer::load(
            env_or("HEED_BENCH_SPM", "datasets/spm8000.model"));
      },
      [](const auto& tok, const std::string& line) { return tok.encode(line); });
}

}  // namespace

// Two timed passes over the corpus each; wall time, as the baselines measure it.
BENCHMARK(BM_WordPieceEncodeCorpus)->Unit(benchmark::kSecond)->Iterations(2)->UseRealTime();
BENCHMARK(BM_ByteLevelBpeEncodeCorpus)->Unit(benchmark::kSecond)->Iterations(2)->UseRealTime();
BENCHMARK(BM_SentencePieceEncodeCorpus)->Unit(benchmark::kSecond)->Iterations(2)->UseRealTime();

BENCHMARK_MAIN();
