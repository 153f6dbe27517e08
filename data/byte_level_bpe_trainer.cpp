#include "data/byte_level_bpe_trainer.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "base/error.h"
#include "data/byte_level_bpe.h"
#include "data/gpt2_split.h"
#include "data/unicode.h"
#include "data/vocab.h"
#include "io/atomic_file.h"
#include "io/text_file.h"

namespace heed::data {
namespace {

using WordCounts = std::unordered_map<std::string, int64_t, StringHash, std::equal_to<>>;

// The words of the corpus as raw bytes (spelled in byte symbols only once each, at training).
// Special tokens are not looked for in the text: Hugging Face adds them to the tokenizer only
// after training, so while it counts, "<s>" in a line is three ordinary characters.
class WordCounter {
 public:
  explicit WordCounter(bool add_prefix_space) : add_prefix_space_(add_prefix_space) {}

  // One sequence as the trainer's feed sees it; `utf8` has been checked.
  void add(std::string_view utf8) {
    // ByteLevel's rule (starts_with(' ')), not transformers' (any whitespace); an empty
    // sequence gets no space, as NormalizedString::prepend does nothing to it.
    if (add_prefix_space_ && !utf8.empty() && utf8[0] != ' ') {
      prefixed_.assign(1, ' ');
      prefixed_ += utf8;
      utf8 = prefixed_;
    }
    words_.clear();
    split_gpt2_words(utf8, words_);
    for (std::string_view w : words_) {
      auto it = counts_.find(w);
      if (it == counts_.end()) it = counts_.emplace(std::string(w), 0).first;
      ++it->second;
    }
  }

  const WordCounts& counts() const { return counts_; }

 private:
  bool add_prefix_space_;
  WordCounts counts_;
  std::vector<std::string_view> words_;  // reused by each add
  std::string prefixed_;
};

// Feeds `path` to `counter` line by line, each line with its "\n" (and a "\r" before it), as
// Rust's BufRead::read_line gives them to the trainer; a last line without "\n" is a line too.
void count_file(const std::string& path, WordCounter& counter) {
  io::check_not_a_directory(path);
  std::ifstream in(path, std::ios::binary);
  HEED_CHECK(in.good(), "cannot read {}: {}", path, std::strerror(errno));
  std::vector<char> block(size_t{1} << 20);
  std::string pending;  // the start of a line the next block finishes
  int64_t line_no = 0;
  const auto take = [&](std::string_view line) {
    ++line_no;
    if (size_t bad = find_invalid_utf8(line); bad != std::string_view::npos)
      fail("{}:{}: invalid UTF-8 at byte {} of the line", path, line_no, bad);
    counter.add(line);
  };
  while (in) {
    in.read(block.data(), static_cast<std::streamsize>(block.size()));
    pending.append(block.data(), static_cast<size_t>(in.gcount()));
    const std::string_view text = pending;
    size_t start = 0;
    for (size_t eol; (eol = text.find('\n', start)) != std::string_view::npos; start = eol + 1)
      take(text.substr(start, eol + 1 - start));
    pending.erase(0, start);
  }
  HEED_CHECK(!in.bad(), "cannot read {}: {}", path, std::strerror(errno));
  if (!pending.empty()) take(pending);
}

// The vocabulary as it grows: tokens in id order, and the id of each.
struct TokenTable {
  std::vector<std::string> tokens;
  std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>> ids;

  // The id of `token`, added at the end when new.
  int32_t add(std::string token) {
    if (auto it = ids.find(token); it != ids.end()) return it->second;
    const auto id = static_cast<int32_t>(tokens.size());
    ids.emplace(token, id);
    tokens.push_back(std::move(token));
    return id;
  }
};

uint64_t pair_key(int32_t left, int32_t right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}
int32_t left_of(uint64_t pair) {
  return static_cast<int32_t>(pair >> 32);
}
int32_t right_of(uint64_t pair) {
  return static_cast<int32_t>(pair & 0xFFFFFFFFu);
}

// Pair -> count, open addressing: the merge loop does little else than update these counts,
// and std::unordered_map's node per pair costs a cache miss each. Entries are never removed
// (a count may fall to 0), as in Hugging Face's map.
class PairCounts {
 public:
  PairCounts() { rehash(1024); }

  int64_t& operator[](uint64_t key) {
    size_t i = slot(key);
    if (keys_[i] == kEmpty) {
      if (2 * (size_ + 1) > keys_.size()) {
        rehash(2 * keys_.size());
        i = slot(key);
      }
      keys_[i] = key;
      ++size_;
    }
    return values_[i];
  }

  int64_t at(uint64_t key) const {
    const size_t i = slot(key);
    return keys_[i] == kEmpty ? 0 : values_[i];
  }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t{0};  // the pair (-1, -1): ids are never -1

  // Where `key` is, or the empty slot where it would go.
  size_t slot(uint64_t key) const {
    size_t i = static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_);
    while (keys_[i] != kEmpty && keys_[i] != key) i = (i + 1) & (keys_.size() - 1);
    return i;
  }

  void rehash(size_t capacity) {  // capacity: a power of two
    std::vector<uint64_t> keys(capacity, kEmpty);
    std::vector<int64_t> values(capacity, 0);
    keys_.swap(keys);
    values_.swap(values);
    shift_ = 64 - std::countr_zero(capacity);
    for (size_t j = 0; j < keys.size(); ++j) {
      if (keys[j] == kEmpty) continue;
      const size_t i = slot(keys[j]);
      keys_[i] = keys[j];
      values_[i] = values[j];
    }
  }

  std::vector<uint64_t> keys_;
  std::vector<int64_t> values_;
  size_t size_ = 0;
  int shift_ = 0;
};

// A pair waiting to be merged, with the words it was formed in, as Hugging Face queues it: a
// pair forms in one merge only (when the newer of its two tokens is made, or at the start), so
// those are all the words that can hold it.
struct Candidate {
  int64_t count;
  uint64_t pair;
  std::vector<uint32_t> words;
};

// Max-heap order: the higher count, then the smaller pair (left id, then right id).
bool lower_priority(const Candidate& a, const Candidate& b) {
  return a.count != b.count ? a.count < b.count : a.pair > b.pair;
}

// Groups (pair, word) sightings into candidates, one per pair, each word once, and queues
// those whose pair still occurs.
void queue_sightings(std::vector<std::pair<uint64_t, uint32_t>>& sightings,
                     const PairCounts& pair_counts, std::vector<Candidate>& heap) {
  std::sort(sightings.begin(), sightings.end());
  sightings.erase(std::unique(sightings.begin(), sightings.end()), sightings.end());
  for (size_t i = 0; i < sightings.size();) {
    const uint64_t pair = sightings[i].first;
    Candidate c{pair_counts.at(pair), pair, {}};
    for (; i < sightings.size() && sightings[i].first == pair; ++i)
      c.words.push_back(sightings[i].second);
    if (c.count <= 0) continue;
    heap.push_back(std::move(c));
    std::push_heap(heap.begin(), heap.end(), lower_priority);
  }
  sightings.clear();
}

// The unique words as symbol ids, one after another in one array (each shrinks in place as it
// is merged), with their counts, and every adjacent pair's count over the corpus.
class Merger {
 public:
  Merger(const WordCounts& counts, const std::array<int32_t, 256>& byte_ids) {
    size_t total = 0;
    for (const auto& [word, count] : counts) total += word.size();
    symbols_.reserve(total);
    std::vector<std::pair<uint64_t, uint32_t>> sightings;
    sightings.reserve(total);
    for (const auto& [word, count] : counts) {
      const auto w = static_cast<uint32_t>(counts_.size());
      begin_.push_back(symbols_.size());
      length_.push_back(static_cast<uint32_t>(word.size()));
      counts_.push_back(count);
      for (size_t i = 0; i < word.size(); ++i) {
        symbols_.push_back(byte_ids[static_cast<unsigned char>(word[i])]);
        if (i == 0) continue;
        const uint64_t pair = pair_key(symbols_[symbols_.size() - 2], symbols_.back());
        pair_counts_[pair] += count;
        sightings.emplace_back(pair, w);
      }
    }
    queue_sightings(sightings, pair_counts_, heap_);
  }

  // The pair to merge next, or none when the best occurs fewer than `min_count` times.
  std::optional<Candidate> next(int64_t min_count) {
    while (!heap_.empty()) {
      std::pop_heap(heap_.begin(), heap_.end(), lower_priority);
      Candidate top = std::move(heap_.back());
      heap_.pop_back();
      const int64_t current = pair_counts_.at(top.pair);
      if (top.count != current) {  // outdated: back in the queue with today's count
        top.count = current;
        heap_.push_back(std::move(top));
        std::push_heap(heap_.begin(), heap_.end(), lower_priority);
        continue;
      }
      if (top.count < min_count) return std::nullopt;
      return top;
    }
    return std::nullopt;
  }

  // Replaces the candidate's pair by `merged` in its words and queues the pairs this forms.
  void merge(const Candidate& c, int32_t merged) {
    for (uint32_t w : c.words) merge_word(w, left_of(c.pair), right_of(c.pair), merged);
    queue_sightings(sightings_, pair_counts_, heap_);
  }

 private:
  // Left to right, never overlapping ("a a a" -> "aa a"), with Hugging Face's bookkeeping: the
  // pairs around each occurrence lose it and the pairs with `merged` gain it, while the merged
  // pair's own count is left as it was (its one queue entry is spent, so it is not read again).
  void merge_word(uint32_t w, int32_t left, int32_t right, int32_t merged) {
    int32_t* s = symbols_.data() + begin_[w];
    const uint32_t n = length_[w];
    const int64_t count = counts_[w];
    uint32_t out = 0;
    for (uint32_t i = 0; i < n;) {
      if (i + 1 < n && s[i] == left && s[i + 1] == right) {
        if (out > 0) {
          pair_counts_[pair_key(s[out - 1], left)] -= count;
          gain(pair_key(s[out - 1], merged), count, w);
        }
        if (i + 2 < n) {
          pair_counts_[pair_key(right, s[i + 2])] -= count;
          gain(pair_key(merged, s[i + 2]), count, w);
        }
        s[out++] = merged;
        i += 2;
      } else {
        s[out++] = s[i++];
      }
    }
    length_[w] = out;
  }

  void gain(uint64_t pair, int64_t count, uint32_t w) {
    pair_counts_[pair] += count;
    sightings_.emplace_back(pair, w);
  }

  std::vector<int32_t> symbols_;
  std::vector<size_t> begin_;
  std::vector<uint32_t> length_;
  std::vector<int64_t> counts_;
  PairCounts pair_counts_;
  std::vector<Candidate> heap_;
  std::vector<std::pair<uint64_t, uint32_t>> sightings_;  // pairs a merge formed, and where
};

std::string symbol_of(unsigned char byte) {
  std::string s;
  append_utf8(s, bytes_to_unicode()[byte]);
  return s;
}

void check_options(const ByteLevelBpeTrainOptions& o) {
  HEED_CHECK(o.vocab_size > 0, "byte-level BPE training: vocab_size must be positive, not {}",
             o.vocab_size);
  HEED_CHECK(o.min_frequency >= 0,
             "byte-level BPE training: min_frequency must be 0 or more, not {}", o.min_frequency);
  std::unordered_set<std::string_view> seen;
  for (const std::string& s : o.special_tokens) {
    HEED_CHECK(!s.empty(), "byte-level BPE training: a special token is empty");
    HEED_CHECK(find_invalid_utf8(s) == std::string_view::npos,
               "byte-level BPE training: the special token '{}' is not valid UTF-8",
               replace_invalid_utf8(s));
    HEED_CHECK(seen.insert(s).second,
               "byte-level BPE training: the special token '{}' is listed twice", s);
  }
}

TrainedByteLevelBpe train_on_counts(const WordCounts& counts, const ByteLevelBpeTrainOptions& o) {
  TokenTable table;
  for (const std::string& s : o.special_tokens) table.add(s);
  const size_t num_special = table.tokens.size();

  // The alphabet: every byte the corpus uses (or all 256), in the code point order of their
  // symbols, which is not byte order (the 68 remapped bytes sort after 0xFF).
  std::array<bool, 256> used{};
  used.fill(o.initial_alphabet);
  for (const auto& [word, count] : counts)
    for (char c : word) used[static_cast<unsigned char>(c)] = true;
  std::vector<int> alphabet;
  for (int b = 0; b < 256; ++b)
    if (used[b]) alphabet.push_back(b);
  std::sort(alphabet.begin(), alphabet.end(),
            [](int a, int b) { return bytes_to_unicode()[a] < bytes_to_unicode()[b]; });
  // A special token spelled as one symbol stands for that byte too, as in Hugging Face.
  std::array<int32_t, 256> byte_ids{};
  for (int b : alphabet) byte_ids[b] = table.add(symbol_of(static_cast<unsigned char>(b)));

  // Hugging Face returns more tokens than asked for here; a size the caller chose and did not
  // get is an error that names the size that works.
  const size_t minimum = table.tokens.size();
  HEED_CHECK(static_cast<size_t>(o.vocab_size) >= minimum,
             "byte-level BPE training: vocab_size {} is below the minimum for this corpus, {}: "
             "its {} special tokens and {} byte symbols",
             o.vocab_size, minimum, num_special, minimum - num_special);

  Merger merger(counts, byte_ids);
  const int64_t min_count = std::max<int64_t>(1, o.min_frequency);
  std::vector<uint64_t> merged_pairs;
  while (table.tokens.size() < static_cast<size_t>(o.vocab_size)) {
    const std::optional<Candidate> top = merger.next(min_count);
    if (!top) break;
    // A merge whose token is already a special token takes that token's id, and the vocabulary
    // does not grow, as in Hugging Face. No two merges make the same token: a span of a word
    // that no token crosses is merged exactly as it would be alone, so every word makes the
    // token from the same pair, in the same merge. (Hence no pair is merged twice either, and
    // merges.txt, which Hugging Face writes from a map of pairs, lists every merge once.)
    const int32_t merged =
        table.add(table.tokens[left_of(top->pair)] + table.tokens[right_of(top->pair)]);
    merged_pairs.push_back(top->pair);
    merger.merge(*top, merged);
  }

  TrainedByteLevelBpe out;
  for (uint64_t pair : merged_pairs)
    out.merges.emplace_back(table.tokens[left_of(pair)], table.tokens[right_of(pair)]);
  out.tokens = std::move(table.tokens);
  return out;
}

}  // namespace

TrainedByteLevelBpe train_byte_level_bpe(std::span<const std::string> files,
                                         const ByteLevelBpeTrainOptions& options) {
  check_options(options);
  WordCounter counter(options.add_prefix_space);
  for (const std::string& path : files) count_file(path, counter);
  return train_on_counts(counter.counts(), options);
}

TrainedByteLevelBpe train_byte_level_bpe_on_texts(std::span<const std::string> texts,
                                                  const ByteLevelBpeTrainOptions& options) {
  check_options(options);
  WordCounter counter(options.add_prefix_space);
  for (size_t i = 0; i < texts.size(); ++i) {
    if (size_t bad = find_invalid_utf8(texts[i]); bad != std::string_view::npos)
      fail("byte-level BPE training: text {} is not valid UTF-8 (byte {} is 0x{:02X})", i, bad,
           static_cast<unsigned char>(texts[i][bad]));
    counter.add(texts[i]);
  }
  return train_on_counts(counter.counts(), options);
}

void save_byte_level_bpe(const TrainedByteLevelBpe& bpe, const std::string& dir) {
  std::filesystem::create_directories(dir);
  // serde_json's compact form: no spaces, "\"" "\\" and control characters escaped (\u00XX in
  // lower case), everything else as UTF-8, which is what nlohmann's dump() writes too.
  std::string vocab = "{";
  for (size_t id = 0; id < bpe.tokens.size(); ++id) {
    if (id > 0) vocab += ',';
    vocab += nlohmann::json(bpe.tokens[id]).dump();
    vocab += ':';
    vocab += std::to_string(id);
  }
  vocab += '}';
  std::string merges = "#version: 0.2\n";
  for (const auto& [left, right] : bpe.merges) merges += left + ' ' + right + '\n';
  io::write_file_atomically((std::filesystem::path(dir) / "vocab.json").string(), vocab);
  io::write_file_atomically((std::filesystem::path(dir) / "merges.txt").string(), merges);
}

}  // namespace heed::data
