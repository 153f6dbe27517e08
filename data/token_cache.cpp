#include "data/token_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <utility>
#include <vector>

#include "base/error.h"
#include "data/fingerprint.h"
#include "data/text_tokenizer.h"
#include "io/atomic_file.h"

namespace heed::data {
namespace {

constexpr char kMagic[8] = {'H', 'E', 'E', 'D', 'T', 'O', 'K', 'C'};

struct Header {
  char magic[8];
  uint32_t version;
  uint32_t id_bytes;
  uint64_t corpus_size;
  uint64_t corpus_fingerprint;
  uint64_t tokenizer_fingerprint;
  uint64_t num_tokens;
  uint64_t num_documents;
};
static_assert(sizeof(Header) == 56);

struct CorpusKey {
  uint64_t size, fingerprint, tokenizer;
};

CorpusKey key_of(const std::string& corpus_path, const TextTokenizer& tokenizer) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(corpus_path, ec);
  HEED_CHECK(!ec, "{}: cannot read corpus: {}", corpus_path, ec.message());
  return {size, fingerprint_file(corpus_path), tokenizer.fingerprint()};
}

// Reads and checks the header; nullopt when the file does not exist.
std::optional<Header> read_header(const std::string& cache_path) {
  std::ifstream in(cache_path, std::ios::binary);
  if (!in.good()) return std::nullopt;
  Header h{};
  in.read(reinterpret_cast<char*>(&h), sizeof h);
  HEED_CHECK(in.gcount() >= 8 && std::memcmp(h.magic, kMagic, 8) == 0,
             "{}: not a heed token cache (bad magic); delete it or choose another cache path",
             cache_path);
  HEED_CHECK(in.gcount() == sizeof h, "{}: truncated token cache header; delete the file",
             cache_path);
  return h;
}

std::string stale_reason(const Header& h, const CorpusKey& key) {
  if (h.version != TokenCache::kVersion)
    return fmt::format("format version {} (current {})", h.version, TokenCache::kVersion);
  if (h.corpus_size != key.size || h.corpus_fingerprint != key.fingerprint)
    return "the corpus changed";
  if (h.tokenizer_fingerprint != key.tokenizer) return "the tokenizer or vocabulary changed";
  return "";
}

}  // namespace

TokenCache::TokenCache(TokenCache&& o) noexcept {
  *this = std::move(o);
}

TokenCache& TokenCache::operator=(TokenCache&& o) noexcept {
  if (this != &o) {
    unmap();
    path_ = std::move(o.path_);
    map_ = std::exchange(o.map_, nullptr);
    map_size_ = std::exchange(o.map_size_, 0);
    id_bytes_ = o.id_bytes_;
    num_tokens_ = o.num_tokens_;
    num_documents_ = o.num_documents_;
    corpus_bytes_ = o.corpus_bytes_;
    doc_offsets_ = std::exchange(o.doc_offsets_, nullptr);
    ids_ = std::exchange(o.ids_, nullptr);
  }
  return *this;
}

TokenCache::~TokenCache() {
  unmap();
}

void TokenCache::unmap() {
  if (map_) munmap(map_, map_size_);
  map_ = nullptr;
}

void TokenCache::copy(uint64_t begin, uint64_t end, int32_t* out) const {
  HEED_CHECK(begin <= end && end <= num_tokens_, "{}: token range [{}, {}) outside [0, {})", path_,
             begin, end, num_tokens_);
  if (id_bytes_ == 2) {
    const auto* p = static_cast<const uint16_t*>(ids_);
    for (uint64_t i = begin; i < end; ++i) *out++ = p[i];
  } else {
    std::memcpy(out, static_cast<const uint32_t*>(ids_) + begin, (end - begin) * 4);
  }
}

TokenCache TokenCache::build(const std::string& corpus_path, const std::string& cache_path,
                             const TextTokenizer& tokenizer) {
  const CorpusKey key = key_of(corpus_path, tokenizer);
  std::ifstream in(corpus_path, std::ios::binary);
  HEED_CHECK(in.good(), "{}: cannot open corpus", corpus_path);
  std::vector<uint32_t> ids;
  std::vector<uint64_t> doc_offsets{0};
  std::vector<int32_t> line_ids;
  std::string line;
  size_t line_no = 0;
  auto close_document = [&] {
    if (ids.size() > doc_offsets.back()) doc_offsets.push_back(ids.size());
  };
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) {
      close_document();
      continue;
    }
    line_ids.clear();
    try {
      line_ids = tokenizer.encode_corpus_line(line);
    } catch (const Error& e) {
      fail("{}:{}: {}", corpus_path, line_no, e.what());
    }
    ids.insert(ids.end(), line_ids.begin(), line_ids.end());
  }
  close_document();

  Header h{};
  std::memcpy(h.magic, kMagic, 8);
  h.version = kVersion;
  h.id_bytes = tokenizer.vocab_size() <= 65536 ? 2 : 4;
  h.corpus_size = key.size;
  h.corpus_fingerprint = key.fingerprint;
  h.tokenizer_fingerprint = key.tokenizer;
  h.num_tokens = ids.size();
  h.num_documents = doc_offsets.size() - 1;

  // Written under a temporary name and renamed into place: every write, the fsync and the
  // close are checked, and on any failure (a full disk) the temporary file is removed, so no
  // truncated cache is left for the next run.
  io::AtomicFile out(cache_path);
  out.write(&h, sizeof h);
  out.write(doc_offsets.data(), doc_offsets.size() * 8);
  if (h.id_bytes == 2) {
    const std::vector<uint16_t> narrow(ids.begin(), ids.end());
    out.write(narrow.data(), narrow.size() * 2);
  } else {
    out.write(ids.data(), ids.size() * 4);
  }
  out.commit();
  return open(cache_path, corpus_path, tokenizer);
}

TokenCache TokenCache::open(const std::string& cache_path, const std::string& corpus_path,
                            const TextTokenizer& tokenizer) {
  auto header = read_header(cache_path);
  HEED_CHECK(header.has_value(), "{}: cannot open token cache", cache_path);
  const Header& h = *header;
  const std::string stale = stale_reason(h, key_of(corpus_path, tokenizer));
  HEED_CHECK(stale.empty(), "{}: token cache does not match {}: {}", cache_path, corpus_path,
             stale);
  HEED_CHECK(h.id_bytes == 2 || h.id_bytes == 4, "{}: corrupt token cache (id width {})",
             cache_path, h.id_bytes);

  const int fd = ::open(cache_path.c_str(), O_RDONLY | O_CLOEXEC);
  HEED_CHECK(fd >= 0, "{}: cannot open token cache: {}", cache_path, std::strerror(errno));
  struct stat st {};
  ::fstat(fd, &st);
  const auto file_size = static_cast<uint64_t>(st.st_size);
  // Checked without overflow: counts come from an untrusted file.
  const bool sizes_ok =
      h.num_documents < (file_size / 8) && h.num_tokens < file_size &&
      file_size == sizeof(Header) + (h.num_documents + 1) * 8 + h.num_tokens * h.id_bytes;
  if (!sizes_ok) {
    ::close(fd);
    fail(
        "{}: truncated or corrupt token cache ({} bytes for {} documents and {} tokens); "
        "delete it to rebuild",
        cache_path, file_size, h.num_documents, h.num_tokens);
  }
  void* map = mmap(nullptr, file_size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  HEED_CHECK(map != MAP_FAILED, "{}: mmap failed: {}", cache_path, std::strerror(errno));

  TokenCache cache;
  cache.path_ = cache_path;
  cache.map_ = map;
  cache.map_size_ = file_size;
  cache.id_bytes_ = static_cast<int>(h.id_bytes);
  cache.num_tokens_ = h.num_tokens;
  cache.num_documents_ = h.num_documents;
  cache.corpus_bytes_ = h.corpus_size;
  cache.doc_offsets_ = reinterpret_cast<const uint64_t*>(static_cast<const char*>(map) + sizeof h);
  cache.ids_ = cache.doc_offsets_ + h.num_documents + 1;
  // Document offsets must be a non-decreasing walk from 0 to num_tokens.
  bool offsets_ok =
      cache.doc_offsets_[0] == 0 && cache.doc_offsets_[h.num_documents] == h.num_tokens;
  for (uint64_t d = 0; offsets_ok && d < h.num_documents; ++d)
    offsets_ok = cache.doc_offsets_[d] < cache.doc_offsets_[d + 1];
  HEED_CHECK(offsets_ok, "{}: corrupt token cache (document offsets); delete it to rebuild",
             cache_path);
  return cache;
}

TokenCache TokenCache::open_or_build(const std::string& corpus_path, const std::string& cache_path,
                                     const TextTokenizer& tokenizer,
                                     const std::function<void(const std::string&)>& log) {
  auto header = read_header(cache_path);
  std::string reason = "no cache yet";
  if (header) {
    reason = stale_reason(*header, key_of(corpus_path, tokenizer));
    if (reason.empty()) return open(cache_path, corpus_path, tokenizer);
  }
  if (log)
    log(fmt::format("{}: building token cache from {} ({})", cache_path, corpus_path, reason));
  return build(corpus_path, cache_path, tokenizer);
}

}  // namespace heed::data
