#include "data/byte_level_bpe.h"

#include <algorithm>
#include <functional>
#include <mutex>
#include <queue>

#include "base/error.h"
#include "data/byte_level_bpe_files.h"
#include "data/byte_level_bpe_trainer.h"
#include "data/byte_symbols.h"
#include "data/fingerprint.h"
#include "data/gpt2_split.h"
#include "data/unicode.h"

namespace heed::data {
namespace {

uint64_t pair_key(int32_t left, int32_t right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}

}  // namespace

// What copies of one ByteLevelBpe share: the words already encoded.
struct ByteLevelBpe::Engine {
  std::mutex mutex;  // guards cache
  std::unordered_map<std::string, std::vector<int32_t>, StringHash, std::equal_to<>> cache;
};

struct ByteLevelBpe::MergeNames {
  std::string source;
  const std::vector<size_t>* lines = nullptr;  // merges.txt's line of each merge, or none

  std::string at(size_t i) const {
    return lines ? fmt::format("{}:{}", source, (*lines)[i])
                 : fmt::format("{}: merges[{}]", source, i);
  }
  std::string first(size_t i) const {
    return lines ? fmt::format("line {}", (*lines)[i]) : fmt::format("merges[{}]", i);
  }
};

ByteLevelBpe ByteLevelBpe::load(const std::string& vocab_json, const std::string& merges_txt,
                                ByteLevelBpeOptions options) {
  std::vector<std::string> tokens = read_vocab_json(vocab_json);
  std::vector<size_t> lines;
  const std::vector<std::pair<std::string, std::string>> merges =
      read_merges_txt(merges_txt, lines);
  return build(std::move(tokens), merges, options, vocab_json, MergeNames{merges_txt, &lines});
}

ByteLevelBpe ByteLevelBpe::from_parts(std::vector<std::string> tokens_by_id,
                                      std::vector<std::pair<std::string, std::string>> merges,
                                      ByteLevelBpeOptions options, const std::string& source) {
  return build(std::move(tokens_by_id), merges, options, source, MergeNames{source});
}

ByteLevelBpe ByteLevelBpe::build(std::vector<std::string> tokens_by_id,
                                 const std::vector<std::pair<std::string, std::string>>& merges,
                                 ByteLevelBpeOptions options, const std::string& vocab_source,
                                 const MergeNames& merge_names) {
  ByteLevelBpe bpe;
  bpe.options_ = options;
  bpe.set_vocab(std::move(tokens_by_id), vocab_source);
  bpe.check_byte_symbols(vocab_source);
  bpe.add_merges(merges, merge_names);
  bpe.engine_ = std::make_shared<Engine>();
  return bpe;
}

void ByteLevelBpe::set_vocab(std::vector<std::string> tokens_by_id, const std::string& source) {
  HEED_CHECK(!tokens_by_id.empty(), "{}: the vocabulary is empty", source);
  HEED_CHECK(tokens_by_id.size() <= INT32_MAX, "{}: {} tokens are more than 32-bit ids can number",
             source, tokens_by_id.size());
  for (size_t id = 0; id < tokens_by_id.size(); ++id) {
    HEED_CHECK(find_invalid_utf8(tokens_by_id[id]) == std::string::npos,
               "{}: the token of id {} is not valid UTF-8", source, id);
  }
  try {
    vocab_ = Vocab(std::move(tokens_by_id));
  } catch (const Error& e) {
    fail("{}: {}", source, e.what());  // a token listed twice
  }
  token_bytes_.reserve(vocab_.tokens().size());
  for (const std::string& token : vocab_.tokens()) token_bytes_.push_back(spelled_bytes(token));
}

void ByteLevelBpe::check_byte_symbols(const std::string& source) {
  for (int b = 0; b < 256; ++b) {
    std::string symbol;
    append_utf8(symbol, bytes_to_unicode()[b]);
    const std::optional<int32_t> found = vocab_.find(symbol);
    // Without it a word holding that byte would have no spelling.
    HEED_CHECK(found.has_value(),
               "{}: no token for byte 0x{:02X} (the symbol '{}'); byte-level BPE needs all 256",
               source, b, symbol);
    byte_ids_[b] = *found;
  }
}

void ByteLevelBpe::add_merges(const std::vector<std::pair<std::string, std::string>>& merges,
                              const MergeNames& names) {
  merges_.reserve(merges.size());
  for (size_t i = 0; i < merges.size(); ++i) {
    const auto& [left, right] = merges[i];
    const std::string shown = left + " " + right;
    const std::optional<int32_t> left_id = vocab_.find(left), right_id = vocab_.find(right);
    for (const auto& [piece, found] : {std::pair(&left, left_id), std::pair(&right, right_id)}) {
      HEED_CHECK(found.has_value(), "{}: the merge '{}' names '{}', which the vocabulary lacks",
                 names.at(i), shown, *piece);
    }
    const std::string joined = left + right;
    const std::optional<int32_t> result = vocab_.find(joined);
    HEED_CHECK(result.has_value(), "{}: the merge '{}' makes '{}', which the vocabulary lacks",
               names.at(i), shown, joined);
    const int32_t rank = static_cast<int32_t>(merges_.size());
    const auto [it, added] = merges_.emplace(pair_key(*left_id, *right_id), Merge{rank, *result});
    // Readers disagree on which rank a repeated merge has (Python's dict keeps the last), so
    // it is refused rather than guessed.
    HEED_CHECK(added, "{}: the merge '{}' is listed twice (first at {})", names.at(i), shown,
               names.first(static_cast<size_t>(it->second.rank)));
  }
}

std::string_view ByteLevelBpe::prepare(std::string_view text, std::string& storage) const {
  if (size_t bad = find_invalid_utf8(text); bad != std::string_view::npos)
    fail("byte-level BPE: the text is not valid UTF-8 (byte {} is 0x{:02X})", bad,
         static_cast<unsigned char>(text[bad]));
  if (!options_.add_prefix_space || text.empty()) return text;
  const auto lead = static_cast<unsigned char>(text[0]);
  const size_t length = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
  // As transformers' prepare_for_tokenization: no second space before leading whitespace
  // (str.isspace); tokenizers' fast ByteLevel checks for ' ' alone.
  if (is_split_whitespace(decode_utf8(text.substr(0, length), "text")[0])) return text;
  storage.reserve(text.size() + 1);
  storage = " ";
  storage += text;
  return storage;
}

std::vector<std::string_view> ByteLevelBpe::split_words(std::string_view text) const {
  std::vector<std::string_view> words;
  split_gpt2_words(text, words);
  return words;
}

std::vector<std::string> ByteLevelBpe::pre_tokenize(std::string_view utf8) const {
  std::string storage;
  std::vector<std::string> words;
  for (std::string_view w : split_words(prepare(utf8, storage))) words.emplace_back(w);
  return words;
}

std::vector<int32_t> ByteLevelBpe::encode(std::string_view utf8) const {
  std::string storage;
  std::vector<int32_t> ids;
  for (std::string_view word : split_words(prepare(utf8, storage))) encode_word(word, ids);
  return ids;
}

void ByteLevelBpe::encode_word(std::string_view word, std::vector<int32_t>& out) const {
  if (word.size() == 1) {
    out.push_back(byte_ids_[static_cast<unsigned char>(word[0])]);
    return;
  }
  const size_t capacity = options_.cache_capacity;
  if (capacity > 0) {
    std::lock_guard lock(engine_->mutex);
    if (auto it = engine_->cache.find(word); it != engine_->cache.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  std::vector<int32_t> ids = merge_word(word);
  out.insert(out.end(), ids.begin(), ids.end());
  if (capacity > 0) {
    std::lock_guard lock(engine_->mutex);
    // Emptied rather than evicted one by one: a corpus's frequent words come straight back,
    // and the bound on memory is what matters.
    if (engine_->cache.size() >= capacity) engine_->cache.clear();
    engine_->cache.emplace(word, std::move(ids));
  }
}

// encoder.py's loop: while some adjacent pair has a rank, merge every occurrence of the
// lowest-ranked pair, left to right. Here the pairs wait in a heap ordered by (rank, position)
// so a long word costs n log n rather than n^2. Entries of one rank are taken out together
// before any is merged: a merge can make a pair of lower rank, which encoder.py only sees on
// its next pass. No merge makes a new pair of the batch's rank (that pair's halves are both
// shorter than the merged symbol), so one batch is exactly one pass.
std::vector<int32_t> ByteLevelBpe::merge_word(std::string_view word) const {
  struct Candidate {
    int32_t rank, left;  // left: position of the pair's first symbol
    int32_t left_id, right_id, result;
    bool operator>(const Candidate& o) const {
      return rank != o.rank ? rank > o.rank : left > o.left;
    }
  };
  const auto n = static_cast<int32_t>(word.size());
  std::vector<int32_t> id(n), next(n), prev(n);  // a doubly linked list of live symbols
  for (int32_t i = 0; i < n; ++i) {
    id[i] = byte_ids_[static_cast<unsigned char>(word[i])];
    next[i] = i + 1;
    prev[i] = i - 1;
  }
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
  const auto offer = [&](int32_t left) {
    if (left < 0 || next[left] >= n) return;
    auto it = merges_.find(pair_key(id[left], id[next[left]]));
    if (it == merges_.end()) return;
    heap.push({it->second.rank, left, id[left], id[next[left]], it->second.result});
  };
  for (int32_t i = 0; i + 1 < n; ++i) offer(i);
  std::vector<Candidate> batch;
  while (!heap.empty()) {
    batch.clear();
    for (const int32_t rank = heap.top().rank; !heap.empty() && heap.top().rank == rank;) {
      batch.push_back(heap.top());
      heap.pop();
    }
    for (const Candidate& c : batch) {
      const int32_t right = next[c.left];
      // Stale when either symbol has since been merged into something else.
      if (id[c.left] != c.left_id || right >= n || id[right] != c.right_id) continue;
      id[c.left] = c.result;
      id[right] = -1;
      next[c.left] = next[right];
      if (next[right] < n) prev[next[right]] = c.left;
      offer(prev[c.left]);
      offer(c.left);
    }
  }
  std::vector<int32_t> ids;
  for (int32_t i = 0; i < n; i = next[i]) ids.push_back(id[i]);
  return ids;
}

std::string ByteLevelBpe::decode_bytes(std::span<const int32_t> ids) const {
  std::string bytes;
  for (int32_t id : ids) {
    HEED_CHECK(id >= 0 && id < vocab_size(),
               "byte-level BPE: cannot decode id {}: the vocabulary "
               "has ids 0 to {}",
               id, vocab_size() - 1);
    bytes += token_bytes_[static_cast<size_t>(id)];
  }
  return bytes;
}

std::vector<std::pair<std::string, std::string>> ByteLevelBpe::merge_list() const {
  std::vector<std::pair<int32_t, uint64_t>> by_rank;
  by_rank.reserve(merges_.size());
  for (const auto& [pair, merge] : merges_) by_rank.emplace_back(merge.rank, pair);
  std::ranges::sort(by_rank);
  std::vector<std::pair<std::string, std::string>> list;
  list.reserve(by_rank.size());
  for (const auto& [rank, pair] : by_rank) {
    list.emplace_back(token(static_cast<int32_t>(pair >> 32)),
                      token(static_cast<int32_t>(pair & 0xFFFFFFFFu)));
  }
  return list;
}

void ByteLevelBpe::save(const std::string& dir) const {
  save_byte_level_bpe({.tokens = vocab_.tokens(), .merges = merge_list()}, dir);
}

uint64_t ByteLevelBpe::fingerprint() const {
  Fnv1a64 h;
  h.update_u64(vocab_.fingerprint());
  for (const auto& [left, right] : merge_list()) {
    h.update(left);
    h.update(" ");
    h.update(right);
    h.update("\n");
  }
  return h.value();
}

std::string ByteLevelBpe::decode(std::span<const int32_t> ids) const {
  return replace_invalid_utf8(decode_bytes(ids));
}

}  // namespace heed::data
