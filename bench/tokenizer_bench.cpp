// WordPiece throughput on the prepared corpus, one thread, in MB/s of input text.
//   build/bench/bench_tokenizer [--benchmark_min_time=2]
// Needs datasets/lm/train.txt and datasets/vocab.txt (scripts/prepare_data.sh, then the
// bert_mlm config trains the vocab; or HEED_BENCH_CORPUS / HEED_BENCH_VOCAB to point
// elsewhere). Run from the repository root.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "data/wordpiece.h"

namespace {

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v ? v : fallback;
}

void BM_WordPieceEncodeCorpus(benchmark::State& state) {
  const std::string corpus_path = env_or("HEED_BENCH_CORPUS", "datasets/lm/train.txt");
  const std::string vocab_path = env_or("HEED_BENCH_VOCAB", "datasets/vocab.txt");
  std::ifstream in(corpus_path);
  if (!in.good()) {
    state.SkipWithError(("cannot read " + corpus_path).c_str());
    return;
  }
  std::vector<std::string> lines;
  size_t bytes = 0;
  for (std::string line; std::getline(in, line);) {
    bytes += line.size() + 1;
    lines.push_back(std::move(line));
  }
  auto tok = heed::data::WordPieceTokenizer::from_file(vocab_path);
  size_t tokens = 0;
  for (auto _ : state) {
    tokens = 0;
    for (const std::string& line : lines) tokens += tok.encode_ids(line).size();
    benchmark::DoNotOptimize(tokens);
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes) * state.iterations());
  state.counters["tokens"] = static_cast<double>(tokens);
  state.counters["MB"] = bytes / 1e6;
}

}  // namespace

BENCHMARK(BM_WordPieceEncodeCorpus)->Unit(benchmark::kSecond)->Iterations(2);

BENCHMARK_MAIN();
