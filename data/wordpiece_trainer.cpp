#include "data/wordpiece_trainer.h"

#include <algorithm>
#include <map>
#include <optional>
#include <queue>
#include <set>
#include <unordered_map>
#include <vector>

#include "base/error.h"
#include "data/unicode.h"

namespace heed::data {
namespace {

const std::string kPrefix = "##";

WordPieceTokenizer make_normalizer(const WordPieceTrainerOptions& o) {
  HEED_CHECK(!o.special_tokens.empty(),
             "vocabulary training needs special tokens ([UNK] first of all)");
  WordPieceOptions w;
  w.lowercase = o.lowercase;
  // The basic tokenizer needs an unk token to exist; the trainer's own specials provide it.
  std::vector<std::string> tokens = o.special_tokens;
  if (std::find(tokens.begin(), tokens.end(), w.unk_token) == tokens.end())
    tokens.push_back(w.unk_token);
  return WordPieceTokenizer(Vocab(tokens), w);
}

uint64_t pair_key(int32_t a, int32_t b) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
}

struct Candidate {
  int64_t count;
  uint64_t pair;
  // Max-heap order: higher count first, then the smaller pair.
  bool operator<(const Candidate& o) const {
    return count != o.count ? count < o.count : pair > o.pair;
  }
};

}  // namespace

WordPieceTrainer::WordPieceTrainer(WordPieceTrainerOptions options)
    : options_(std::move(options)), normalizer_(make_normalizer(options_)) {
  HEED_CHECK(options_.vocab_size >= options_.special_tokens.size(),
             "vocab_size {} is smaller than the {} special tokens", options_.vocab_size,
             options_.special_tokens.size());
}

void WordPieceTrainer::add_text(std::string_view text) {
  for (std::string& word : normalizer_.basic_tokenize(text)) {
    if (std::find(options_.special_tokens.begin(), options_.special_tokens.end(), word) !=
        options_.special_tokens.end())
      continue;
    ++word_counts_[std::move(word)];
  }
}

namespace {

// The vocabulary as it grows: tokens in id order, and the id of each.
struct TokenTable {
  std::vector<std::string> tokens;
  std::unordered_map<std::string, int32_t> ids;
  int32_t add(const std::string& t) {
    auto [it, inserted] = ids.emplace(t, static_cast<int32_t>(tokens.size()));
    if (inserted) tokens.push_back(t);
    return it->second;
  }
};

// The limit most frequent characters of the words (ties: the smaller code point).
std::set<char32_t> choose_alphabet(const std::vector<std::pair<std::u32string, int64_t>>& words,
                                   size_t limit) {
  std::map<char32_t, int64_t> char_counts;
  for (const auto& [w, c] : words)
    for (char32_t ch : w) char_counts[ch] += c;
  std::vector<std::pair<char32_t, int64_t>> alphabet(char_counts.begin(), char_counts.end());
  if (alphabet.size() > limit) {
    std::stable_sort(alphabet.begin(), alphabet.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    alphabet.resize(limit);
  }
  std::set<char32_t> chosen;
  for (const auto& [ch, count] : alphabet) chosen.insert(ch);
  return chosen;
}

// The words as piece ids, and for every adjacent pair its count and the words it occurs in.
// merge() joins the most frequent pair everywhere and updates the counts of the pairs around it.
class PairMerger {
 public:
  PairMerger(std::vector<std::vector<int32_t>> pieces, std::vector<int64_t> word_counts)
      : pieces_(std::move(pieces)), counts_(std::move(word_counts)) {
    for (size_t w = 0; w < pieces_.size(); ++w)
      for (size_t i = 0; i + 1 < pieces_[w].size(); ++i) {
        const uint64_t k = pair_key(pieces_[w][i], pieces_[w][i + 1]);
        pair_counts_[k] += counts_[w];
        where_[k].insert(w);
      }
    for (const auto& [k, c] : pair_counts_) queue_.push({c, k});
  }

  // The most frequent pair, if it occurs at least min_frequency times.
  std::optional<Candidate> best(int64_t min_frequency) {
    while (!queue_.empty()) {
      Candidate top = queue_.top();
      queue_.pop();
      const int64_t current = pair_counts_[top.pair];
      if (current != top.count) {  // stale entry: re-queue with the up-to-date count
        if (current > 0) queue_.push({current, top.pair});
        continue;
      }
      if (top.count < min_frequency) return std::nullopt;
      return top;
    }
    return std::nullopt;
  }

  // Replaces the pair (a, b) by `merged` in every word that has it.
  void merge(uint64_t pair, int32_t merged) {
    const auto a = static_cast<int32_t>(pair >> 32);
    const auto b = static_cast<int32_t>(pair & 0xFFFFFFFFu);
    std::set<uint64_t> touched;
    const std::set<size_t> affected = std::move(where_[pair]);
    where_.erase(pair);
    for (size_t w : affected) {
      std::vector<int32_t>& p = pieces_[w];
      const int64_t c = counts_[w];
      for (size_t i = 0; i + 1 < p.size(); ++i) pair_counts_[pair_key(p[i], p[i + 1])] -= c;
      std::vector<int32_t> next;
      next.reserve(p.size());
      for (size_t i = 0; i < p.size(); ++i) {
        if (i + 1 < p.size() && p[i] == a && p[i + 1] == b) {
          next.push_back(merged);
          ++i;
        } else {
          next.push_back(p[i]);
        }
      }
      p = std::move(next);
      for (size_t i = 0; i + 1 < p.size(); ++i) {
        const uint64_t k = pair_key(p[i], p[i + 1]);
        pair_counts_[k] += c;
        where_[k].insert(w);
        touched.insert(k);
      }
    }
    pair_counts_[pair] = 0;
    for (uint64_t k : touched)
      if (pair_counts_[k] > 0) queue_.push({pair_counts_[k], k});
  }

 private:
  std::vector<std::vector<int32_t>> pieces_;
  std::vector<int64_t> counts_;
  std::unordered_map<uint64_t, int64_t> pair_counts_;
  std::unordered_map<uint64_t, std::set<size_t>> where_;
  std::priority_queue<Candidate> queue_;
};

}  // namespace

Vocab WordPieceTrainer::train() const {
  TokenTable table;
  for (const std::string& s : options_.special_tokens) table.add(s);
  const size_t num_special = table.tokens.size();

  // Words in byte order so that every id assignment below is independent of hash order.
  std::vector<std::pair<std::u32string, int64_t>> words;
  words.reserve(word_counts_.size());
  {
    std::map<std::string, int64_t> sorted(word_counts_.begin(), word_counts_.end());
    for (const auto& [w, c] : sorted) words.emplace_back(decode_utf8(w, "word"), c);
  }
  const std::set<char32_t> alphabet = choose_alphabet(words, options_.limit_alphabet);
  for (char32_t ch : alphabet) table.add(encode_utf8(std::u32string_view(&ch, 1)));

  // Words as piece ids; characters outside the alphabet are dropped, as the HF trainer does.
  std::vector<std::vector<int32_t>> pieces(words.size());
  std::vector<int64_t> counts(words.size());
  for (size_t w = 0; w < words.size(); ++w) {
    counts[w] = words[w].second;
    for (size_t i = 0; i < words[w].first.size(); ++i) {
      char32_t ch = words[w].first[i];
      if (!alphabet.count(ch)) continue;
      std::string s = encode_utf8(std::u32string_view(&ch, 1));
      pieces[w].push_back(table.add(i == 0 ? s : kPrefix + s));
    }
  }

  // Every word must stay spellable, so the vocabulary cannot be smaller than what it starts
  // with. Hugging Face's trainer then returns more tokens than asked for; a size the caller
  // chose and did not get is an error that names the size that works (as sentencepiece does).
  const size_t minimum = table.tokens.size();
  HEED_CHECK(options_.vocab_size >= minimum,
             "vocab_size {} is below the minimum for this corpus, {}: its {} special tokens and "
             "{} alphabet pieces (each character, and its ## form where it continues a word)",
             options_.vocab_size, minimum, num_special, minimum - num_special);

  PairMerger merger(std::move(pieces), std::move(counts));
  while (table.tokens.size() < options_.vocab_size) {
    const std::optional<Candidate> top = merger.best(options_.min_frequency);
    if (!top) break;
    const auto a = static_cast<size_t>(top->pair >> 32);
    const auto b = static_cast<size_t>(top->pair & 0xFFFFFFFFu);
    std::string right = table.tokens[b];
    if (right.rfind(kPrefix, 0) == 0) right.erase(0, kPrefix.size());
    merger.merge(top->pair, table.add(table.tokens[a] + right));
  }
  return Vocab(std::move(table.tokens));
}

}  // namespace heed::data
