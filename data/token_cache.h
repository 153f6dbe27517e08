#pragma once
// A corpus tokenized once into a binary file, memory-mapped afterwards.
//
// Corpus format: UTF-8 text, blank lines separate documents; the lines of a document are
// tokenized (no special tokens; TextTokenizer::encode_corpus_line, so a byte-level BPE keeps
// each line's "\n") and concatenated. File layout (little-endian):
//   char[8] magic "HEEDTOKC" | u32 version | u32 id_bytes (2 or 4)
//   u64 corpus_size | u64 corpus_fingerprint | u64 tokenizer_fingerprint
//   u64 num_tokens | u64 num_documents
//   u64 document_offsets[num_documents + 1]   (token index where each document starts)
//   u16/u32 ids[num_tokens]
// The key (corpus size + content fingerprint, tokenizer fingerprint, version) decides whether
// a cache may be reused: a cache built from another corpus or vocabulary is rebuilt, never
// silently reused. A file that is not a cache, or a truncated one, is an error.
#include <cstdint>
#include <functional>
#include <string>

namespace heed::data {

class TextTokenizer;

class TokenCache {
 public:
  static constexpr uint32_t kVersion = 1;

  // Tokenizes `corpus_path` into `cache_path` (written to a temporary file, then renamed).
  static TokenCache build(const std::string& corpus_path, const std::string& cache_path,
                          const TextTokenizer& tokenizer);
  // Maps an existing cache; throws if it is corrupt or was built from another corpus,
  // tokenizer or format version.
  static TokenCache open(const std::string& cache_path, const std::string& corpus_path,
                         const TextTokenizer& tokenizer);
  // Opens the cache when its key matches; otherwise (absent, stale key, older version)
  // builds it. `log` hears why a build happened. Corrupt files still throw.
  static TokenCache open_or_build(const std::string& corpus_path, const std::string& cache_path,
                                  const TextTokenizer& tokenizer,
                                  const std::function<void(const std::string&)>& log = {});

  TokenCache(TokenCache&& other) noexcept;
  TokenCache& operator=(TokenCache&& other) noexcept;
  TokenCache(const TokenCache&) = delete;
  TokenCache& operator=(const TokenCache&) = delete;
  ~TokenCache();

  uint64_t num_tokens() const { return num_tokens_; }
  uint64_t num_documents() const { return num_documents_; }
  // The size of the corpus the ids came from.
  uint64_t corpus_bytes() const { return corpus_bytes_; }
  uint64_t document_begin(uint64_t doc) const { return doc_offsets_[doc]; }
  uint64_t document_end(uint64_t doc) const { return doc_offsets_[doc + 1]; }
  int id_bytes() const { return id_bytes_; }
  int32_t operator[](uint64_t i) const {
    return id_bytes_ == 2 ? static_cast<const uint16_t*>(ids_)[i]
                          : static_cast<int32_t>(static_cast<const uint32_t*>(ids_)[i]);
  }
  // ids [begin, end) into out.
  void copy(uint64_t begin, uint64_t end, int32_t* out) const;
  const std::string& path() const { return path_; }

 private:
  TokenCache() = default;
  void unmap();

  std::string path_;
  void* map_ = nullptr;
  size_t map_size_ = 0;
  int id_bytes_ = 4;
  uint64_t num_tokens_ = 0, num_documents_ = 0, corpus_bytes_ = 0;
  const uint64_t* doc_offsets_ = nullptr;
  const void* ids_ = nullptr;
};

}  // namespace heed::data
