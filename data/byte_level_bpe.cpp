#include "data/byte_level_bpe.h"

#include <unicode/regex.h>
#include <unicode/utext.h>

#include <algorithm>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <queue>
#include <unordered_set>

#include "base/error.h"
#include "data/byte_level_bpe_trainer.h"
#include "data/fingerprint.h"
#include "data/gpt2_ascii_split.h"
#include "data/unicode.h"
#include "io/text_file.h"

namespace heed::data {
namespace {

// GPT-2's pattern (openai/gpt-2 src/encoder.py), verbatim. ICU's \s is Unicode White_Space,
// as it is for Python's regex module and for the Rust regex under tiktoken; JavaScript's \s
// differs on U+0085 and U+FEFF (see tests/data/gpt2/README.md).
constexpr std::string_view kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

constexpr char32_t kFirstRemappedSymbol = 0x100;
// One past the largest symbol bytes_to_unicode() uses: 0x100 + the 68 remapped bytes.
constexpr char32_t kSymbolsEnd = kFirstRemappedSymbol + 68;

bool is_printable_byte(int b) {
  return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

std::array<char32_t, 256> make_bytes_to_unicode() {
  std::array<char32_t, 256> table{};
  char32_t next = kFirstRemappedSymbol;
  for (int b = 0; b < 256; ++b) table[b] = is_printable_byte(b) ? char32_t(b) : next++;
  return table;
}

// symbol -> byte, or -1 for a code point that is not one of the 256 symbols.
std::array<int16_t, kSymbolsEnd> make_unicode_to_bytes() {
  std::array<int16_t, kSymbolsEnd> table;
  table.fill(-1);
  for (int b = 0; b < 256; ++b) table[bytes_to_unicode()[b]] = static_cast<int16_t>(b);
  return table;
}

// The bytes a vocabulary entry spells. A code point outside the 256 symbols (an added token
// such as "<mask>" is all symbols; one with other characters is not) stands for its own UTF-8,
// as the tokenizers library's ByteLevel decoder does, rather than failing the whole decode.
std::string spelled_bytes(const std::string& token) {
  static const std::array<int16_t, kSymbolsEnd> to_byte = make_unicode_to_bytes();
  std::string bytes;
  for (char32_t cp : decode_utf8(token, "vocab.json token")) {
    const int b = cp < kSymbolsEnd ? to_byte[cp] : -1;
    if (b >= 0) {
      bytes.push_back(static_cast<char>(b));
    } else {
      append_utf8(bytes, cp);
    }
  }
  return bytes;
}

uint64_t pair_key(int32_t left, int32_t right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}

// Parses vocab.json, refusing a key that appears twice: JSON readers keep one of the two ids
// (Python's json the last), leaving the other id without a token.
nlohmann::json parse_vocab_json(const std::string& path) {
  const std::string text = io::read_text_file(path);
  std::unordered_set<std::string> keys;
  const auto on_event = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& j) {
    if (event == nlohmann::json::parse_event_t::key && depth == 1) {
      HEED_CHECK(keys.insert(j.get<std::string>()).second, "{}: the token '{}' is listed twice",
                 path, j.get<std::string>());
    }
    return true;
  };
  try {
    return nlohmann::json::parse(text, on_event);
  } catch (const nlohmann::json::exception& e) {
    fail("{}: not valid JSON: {}", path, e.what());
  }
}

// vocab.json's tokens by id.
std::vector<std::string> read_vocab_json(const std::string& path) {
  const nlohmann::json j = parse_vocab_json(path);
  HEED_CHECK(j.is_object(), "{}: expected a JSON object of token -> id, not {}", path,
             j.type_name());
  HEED_CHECK(!j.empty(), "{}: the vocabulary is empty", path);
  const int64_t size = static_cast<int64_t>(j.size());
  HEED_CHECK(size <= INT32_MAX, "{}: {} tokens are more than 32-bit ids can number", path, size);
  std::vector<std::string> tokens(static_cast<size_t>(size));
  std::vector<bool> taken(tokens.size(), false);
  for (const auto& [token, value] : j.items()) {
    HEED_CHECK(value.is_number_integer(), "{}: the id of '{}' is {}; it must be a whole number",
               path, token, value.dump());
    const int64_t id = value.get<int64_t>();
    // Ids index the embedding matrix, so they must fill 0..size-1: a gap would be a row that
    // no token owns.
    HEED_CHECK(id >= 0 && id < size, "{}: the id of '{}' is {}; the {} ids must run from 0 to {}",
               path, token, value.dump(), size, size - 1);
    HEED_CHECK(!taken[id], "{}: the tokens '{}' and '{}' both have id {}", path, tokens[id], token,
               id);
    taken[id] = true;
    tokens[id] = token;
  }
  return tokens;
}

// merges.txt's merges in rank order, and the line each is on (`lines`).
std::vector<std::pair<std::string, std::string>> read_merges_txt(const std::string& path,
                                                                 std::vector<size_t>& lines) {
  const std::string text = io::read_text_file(path);
  std::vector<std::pair<std::string, std::string>> merges;
  std::string_view rest = text;
  size_t line_no = 0;
  while (!rest.empty()) {
    const size_t eol = rest.find('\n');
    std::string_view line = rest.substr(0, eol);
    rest = eol == std::string_view::npos ? std::string_view() : rest.substr(eol + 1);
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line_no == 1 && line.starts_with("#version")) continue;
    if (size_t bad = find_invalid_utf8(line); bad != std::string_view::npos)
      fail("{}:{}: invalid UTF-8 at byte {} of the line", path, line_no, bad);
    const size_t space = line.find(' ');
    HEED_CHECK(space != std::string_view::npos && space > 0 && space + 1 < line.size() &&
                   line.find(' ', space + 1) == std::string_view::npos,
               "{}:{}: '{}' is not a merge (two pieces separated by one space)", path, line_no,
               line);
    merges.emplace_back(line.substr(0, space), line.substr(space + 1));
    lines.push_back(line_no);
  }
  return merges;
}

}  // namespace

const std::array<char32_t, 256>& bytes_to_unicode() {
  static const std::array<char32_t, 256> table = make_bytes_to_unicode();
  return table;
}

// Python's UTF-8 decoder replaces each maximal subpart of an ill-formed sequence (Unicode
// 3.9, "U+FFFD Substitution of Maximal Subparts"): the longest prefix of a well-formed
// sequence, or else one byte. The second byte's range depends on the first (Table 3-7).
std::string replace_invalid_utf8(std::string_view bytes) {
  const auto* s = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t n = bytes.size();
  std::string out;
  out.reserve(n);
  for (size_t i = 0; i < n;) {
    const unsigned char b = s[i];
    int more = 0;  // continuation bytes the lead byte asks for
    unsigned char lo = 0x80, hi = 0xBF;
    if (b < 0x80) {
      more = 0;
    } else if (b >= 0xC2 && b <= 0xDF) {
      more = 1;
    } else if (b >= 0xE0 && b <= 0xEF) {
      more = 2, lo = b == 0xE0 ? 0xA0 : 0x80, hi = b == 0xED ? 0x9F : 0xBF;
    } else if (b >= 0xF0 && b <= 0xF4) {
      more = 3, lo = b == 0xF0 ? 0x90 : 0x80, hi = b == 0xF4 ? 0x8F : 0xBF;
    } else {
      more = -1;  // never a lead byte
    }
    size_t end = i + 1;
    for (int k = 0; k < more && end < n; ++k, ++end) {
      const unsigned char c = s[end];
      if (c < (k == 0 ? lo : 0x80) || c > (k == 0 ? hi : 0xBF)) break;
    }
    if (more >= 0 && end - i == static_cast<size_t>(more) + 1) {
      out.append(bytes.substr(i, end - i));
    } else {
      out += "\xEF\xBF\xBD";
    }
    i = end;
  }
  return out;
}

struct ByteLevelBpe::Engine {
  std::unique_ptr<icu::RegexPattern> pattern;
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
  UErrorCode status = U_ZERO_ERROR;
  UParseError where;
  bpe.engine_->pattern.reset(icu::RegexPattern::compile(
      icu::UnicodeString::fromUTF8(icu::StringPiece(kGpt2Pattern.data(), kGpt2Pattern.size())), 0,
      where, status));
  HEED_CHECK(U_SUCCESS(status), "ICU cannot compile GPT-2's pattern: {}", u_errorName(status));
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

namespace {

// Appends the matches of `matcher`'s pattern in `text`, which `input` reads, to `words`. ICU
// matches the UTF-8 in place; its native indices are byte offsets into `text`.
void append_matches(icu::RegexMatcher& matcher, UText* input, std::string_view text,
                    std::vector<std::string_view>& words) {
  UErrorCode status = U_ZERO_ERROR;
  matcher.reset(input);
  while (matcher.find(status)) {
    const int64_t begin = matcher.start64(status), end = matcher.end64(status);
    words.push_back(text.substr(static_cast<size_t>(begin), static_cast<size_t>(end - begin)));
  }
  HEED_CHECK(U_SUCCESS(status), "byte-level BPE: ICU regex failed: {}", u_errorName(status));
}

// A run of whitespace is matched by backtracking over it; ICU's default 8 MB backtracking
// stack would refuse a text with megabytes of spaces that GPT-2 encodes.
std::unique_ptr<icu::RegexMatcher> unlimited_matcher(const icu::RegexPattern& pattern) {
  UErrorCode status = U_ZERO_ERROR;
  std::unique_ptr<icu::RegexMatcher> matcher(pattern.matcher(status));
  if (U_SUCCESS(status)) matcher->setStackLimit(0, status);
  HEED_CHECK(U_SUCCESS(status), "byte-level BPE: ICU regex setup failed: {}", u_errorName(status));
  return matcher;
}

}  // namespace

std::vector<std::string_view> ByteLevelBpe::split_words(std::string_view text) const {
  std::vector<std::string_view> words;
  if (text.empty()) return words;
  // All-ASCII text, most of an English corpus, by the pattern run by hand: ICU's words there
  // (checked against it in tests/data/gpt2_ascii_split_test.cpp), in a tenth of ICU's time,
  // which was half of encode's.
  if (split_gpt2_ascii(text, words)) return words;
  UErrorCode status = U_ZERO_ERROR;
  std::unique_ptr<UText, decltype(&utext_close)> input(
      utext_openUTF8(nullptr, text.data(), static_cast<int64_t>(text.size()), &status),
      &utext_close);
  HEED_CHECK(U_SUCCESS(status), "byte-level BPE: ICU cannot read the text: {}",
             u_errorName(status));
  append_matches(*unlimited_matcher(*engine_->pattern), input.get(), text, words);
  return words;
}

void split_gpt2_words(std::string_view utf8, std::vector<std::string_view>& words) {
  // Made once per thread: compiling the pattern and making a matcher cost more than matching
  // a line of a corpus.
  struct Splitter {
    std::unique_ptr<icu::RegexPattern> pattern;
    std::unique_ptr<icu::RegexMatcher> matcher;
    UText input = UTEXT_INITIALIZER;
    Splitter() {
      UErrorCode status = U_ZERO_ERROR;
      UParseError where;
      pattern.reset(icu::RegexPattern::compile(
          icu::UnicodeString::fromUTF8(icu::StringPiece(kGpt2Pattern.data(), kGpt2Pattern.size())),
          0, where, status));
      HEED_CHECK(U_SUCCESS(status), "ICU cannot compile GPT-2's pattern: {}", u_errorName(status));
      matcher = unlimited_matcher(*pattern);
    }
    ~Splitter() { utext_close(&input); }
  };
  if (utf8.empty()) return;
  thread_local Splitter splitter;
  UErrorCode status = U_ZERO_ERROR;
  utext_openUTF8(&splitter.input, utf8.data(), static_cast<int64_t>(utf8.size()), &status);
  HEED_CHECK(U_SUCCESS(status), "byte-level BPE: ICU cannot read the text: {}",
             u_errorName(status));
  append_matches(*splitter.matcher, &splitter.input, utf8, words);
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
