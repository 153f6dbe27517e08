// The token cache reader (data/token_cache.h) on arbitrary bytes as the cache file of a fixed
// corpus and tokenizer. A cache is opened only when its key (corpus size and fingerprint,
// tokenizer fingerprint) matches, which a fuzzer would seldom guess, so the target writes the
// right key into bytes 16..39 of every input long enough to have them; the format version
// (bytes 8..11) still decides staleness. A cache that opens must keep the promises of its
// accessors: documents that tile [0, num_tokens), every id readable.
//
// With HEED_FUZZ_WRITE_SEED=DIR set, the target first writes the cache that TokenCache::build
// makes of its corpus to DIR/built.cache: the seed of its corpus.
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <optional>

#include "data/token_cache.h"
#include "data/vocab.h"
#include "data/wordpiece.h"
#include "fuzz/fuzz_util.h"

namespace {

namespace data = heed::data;

constexpr std::string_view kCorpus =
    "The quick brown fox.\nThe lazy dog!\n\n\nhello world\n\n"
    "\xE6\x88\x91\xE6\x98\xAF\xE4\xB8\xAD\xE5\x9B\xBD\xE4\xBA\xBA\n";

struct Fixture {
  data::TextTokenizer tokenizer{
      data::WordPieceTokenizer{data::Vocab(std::vector<std::string>{"[PAD]",
                                                                    "[UNK]",
                                                                    "[CLS]",
                                                                    "[SEP]",
                                                                    "[MASK]",
                                                                    "the",
                                                                    "quick",
                                                                    "brown",
                                                                    "fox",
                                                                    ".",
                                                                    "lazy",
                                                                    "dog",
                                                                    "!",
                                                                    "hello",
                                                                    "world",
                                                                    "\xE6\x88\x91",
                                                                    "\xE6\x98\xAF",
                                                                    "\xE4\xB8\xAD",
                                                                    "\xE5\x9B\xBD",
                                                                    "\xE4\xBA\xBA"})}};
  std::string corpus_path = heed::fuzz::write_scratch("corpus.txt", kCorpus);
  // Bytes 16..39 of a cache of this corpus: corpus size, corpus and tokenizer fingerprints.
  char key[24];

  Fixture() {
    const std::string built = (heed::fuzz::scratch_dir() / "built.cache").string();
    data::TokenCache::build(corpus_path, built, tokenizer);
    std::ifstream in(built, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::memcpy(key, bytes.data() + 16, sizeof key);
    if (const char* dir = std::getenv("HEED_FUZZ_WRITE_SEED")) {
      std::filesystem::copy_file(built, std::filesystem::path(dir) / "built.cache",
                                 std::filesystem::copy_options::overwrite_existing);
    }
  }
};

const Fixture& fixture() {
  static const Fixture f;
  return f;
}

void check_open_cache(const data::TokenCache& cache, size_t file_size) {
  const int id_bytes = cache.id_bytes();
  HEED_FUZZ_REQUIRE(id_bytes == 2 || id_bytes == 4);
  HEED_FUZZ_REQUIRE(56 + (cache.num_documents() + 1) * 8 + cache.num_tokens() * id_bytes ==
                    file_size);
  uint64_t previous_end = 0;
  std::vector<int32_t> ids;
  for (uint64_t d = 0; d < cache.num_documents(); ++d) {
    const uint64_t begin = cache.document_begin(d), end = cache.document_end(d);
    HEED_FUZZ_REQUIRE(begin == previous_end && begin < end && end <= cache.num_tokens());
    ids.resize(end - begin);
    cache.copy(begin, end, ids.data());
    for (uint64_t i = begin; i < end; ++i) HEED_FUZZ_REQUIRE(cache[i] == ids[i - begin]);
    previous_end = end;
  }
  HEED_FUZZ_REQUIRE(previous_end == cache.num_tokens());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Fixture& f = fixture();
  std::string bytes(heed::fuzz::as_text(data, size));
  if (bytes.size() >= 40) std::memcpy(bytes.data() + 16, f.key, sizeof f.key);
  const std::string path = heed::fuzz::write_scratch("corpus.cache", bytes);
  std::optional<data::TokenCache> cache;
  heed::fuzz::rejecting_with_heed_errors(
      [&] { cache.emplace(data::TokenCache::open(path, f.corpus_path, f.tokenizer)); });
  if (cache) check_open_cache(*cache, bytes.size());
  return 0;
}
