#include "data/wordpiece.h"

#include <algorithm>

#include "base/error.h"
#include "data/fingerprint.h"
#include "data/unicode.h"

namespace heed::data {
namespace {

// Python's str.split(): runs of whitespace separate words, none are empty.
std::vector<std::u32string> split_whitespace(std::u32string_view text) {
  std::vector<std::u32string> words;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && is_split_whitespace(text[i])) ++i;
    size_t start = i;
    while (i < text.size() && !is_split_whitespace(text[i])) ++i;
    if (i > start) words.emplace_back(text.substr(start, i - start));
  }
  return words;
}

}  // namespace

WordPieceTokenizer::WordPieceTokenizer(Vocab vocab, WordPieceOptions options)
    : vocab_(std::move(vocab)), options_(std::move(options)) {
  strip_accents_ = options_.strip_accents.value_or(options_.lowercase);
  HEED_CHECK(options_.max_input_chars_per_word > 0, "max_input_chars_per_word must be positive");
  auto unk = vocab_.find(options_.unk_token);
  HEED_CHECK(unk.has_value(), "{}: vocabulary has no unknown token '{}'", vocab_.source(),
             options_.unk_token);
  unk_id_ = *unk;
  pad_id_ = vocab_.find(options_.pad_token);
  cls_id_ = vocab_.find(options_.cls_token);
  sep_id_ = vocab_.find(options_.sep_token);
  mask_id_ = vocab_.find(options_.mask_token);
  for (const std::string* name : {&options_.pad_token, &options_.unk_token, &options_.cls_token,
                                  &options_.sep_token, &options_.mask_token}) {
    if (auto id = vocab_.find(*name)) {
      if (std::find(special_ids_.begin(), special_ids_.end(), *id) == special_ids_.end()) {
        special_ids_.push_back(*id);
        special_strings_.push_back(*name);
      }
    }
  }
  std::sort(special_ids_.begin(), special_ids_.end());
  std::stable_sort(special_strings_.begin(), special_strings_.end(),
                   [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
}

WordPieceTokenizer WordPieceTokenizer::from_file(const std::string& vocab_path,
                                                 WordPieceOptions options) {
  return WordPieceTokenizer(Vocab::load(vocab_path), std::move(options));
}

int32_t WordPieceTokenizer::require(const std::optional<int32_t>& id,
                                    const std::string& name) const {
  HEED_CHECK(id.has_value(), "{}: vocabulary has no special token '{}'", vocab_.source(), name);
  return *id;
}

int32_t WordPieceTokenizer::pad_id() const {
  return require(pad_id_, options_.pad_token);
}
int32_t WordPieceTokenizer::cls_id() const {
  return require(cls_id_, options_.cls_token);
}
int32_t WordPieceTokenizer::sep_id() const {
  return require(sep_id_, options_.sep_token);
}
int32_t WordPieceTokenizer::mask_id() const {
  return require(mask_id_, options_.mask_token);
}

bool WordPieceTokenizer::is_special(int32_t id) const {
  return std::binary_search(special_ids_.begin(), special_ids_.end(), id);
}

uint64_t WordPieceTokenizer::fingerprint() const {
  Fnv1a64 h;
  h.update_u64(vocab_.fingerprint());
  h.update_u64(options_.lowercase);
  h.update_u64(strip_accents_);
  h.update_u64(options_.tokenize_chinese_chars);
  h.update_u64(static_cast<uint64_t>(options_.max_input_chars_per_word));
  for (const std::string* s :
       {&options_.continuation_prefix, &options_.unk_token, &options_.pad_token,
        &options_.cls_token, &options_.sep_token, &options_.mask_token}) {
    h.update(*s);
    h.update(std::string_view("\0", 1));
  }
  return h.value();
}

void WordPieceTokenizer::basic_tokenize_chunk(std::string_view text,
                                              std::vector<std::string>& out) const {
  std::u32string cps = decode_utf8(text, "text");
  // Clean: drop NUL, U+FFFD and controls; every whitespace becomes a plain space. Then put
  // spaces around CJK ideographs so each is its own word.
  std::u32string cleaned;
  cleaned.reserve(cps.size());
  for (char32_t c : cps) {
    if (c == 0 || c == 0xFFFD || is_bert_control(c)) continue;
    if (is_bert_whitespace(c)) {
      cleaned.push_back(U' ');
    } else if (options_.tokenize_chinese_chars && is_cjk_ideograph(c)) {
      cleaned.push_back(U' ');
      cleaned.push_back(c);
      cleaned.push_back(U' ');
    } else {
      cleaned.push_back(c);
    }
  }
  // transformers normalizes to NFC before splitting so that composed and decomposed spellings
  // of a character find the same vocabulary entry (it matters for cased vocabularies).
  std::u32string normalized = to_nfc(cleaned);
  for (std::u32string& word : split_whitespace(normalized)) {
    if (options_.lowercase) word = to_lower(word);
    if (strip_accents_) word = strip_accents(word);
    // Each punctuation character is its own word. Stripping accents may leave nothing (a lone
    // combining mark): such a word disappears, as transformers' second whitespace split does.
    std::u32string current;
    for (char32_t c : word) {
      if (is_bert_punctuation(c)) {
        if (!current.empty()) out.push_back(encode_utf8(current));
        current.clear();
        out.push_back(encode_utf8(std::u32string_view(&c, 1)));
      } else if (is_split_whitespace(c)) {
        // Lower-casing or NFD never produce whitespace; kept for safety of the invariant
        // that no word contains whitespace.
        if (!current.empty()) out.push_back(encode_utf8(current));
        current.clear();
      } else {
        current.push_back(c);
      }
    }
    if (!current.empty()) out.push_back(encode_utf8(current));
  }
}

std::vector<std::string> WordPieceTokenizer::basic_tokenize(std::string_view text) const {
  std::vector<std::string> out;
  // Special token strings in the raw text are kept whole (transformers' added-token split).
  size_t chunk_start = 0, i = 0;
  while (i < text.size()) {
    bool matched = false;
    for (const std::string& s : special_strings_) {
      if (!s.empty() && s[0] == text[i] && text.compare(i, s.size(), s) == 0) {
        basic_tokenize_chunk(text.substr(chunk_start, i - chunk_start), out);
        out.push_back(s);
        i += s.size();
        chunk_start = i;
        matched = true;
        break;
      }
    }
    if (!matched) ++i;
  }
  basic_tokenize_chunk(text.substr(chunk_start), out);
  return out;
}

void WordPieceTokenizer::wordpiece_ids(std::string_view word, std::vector<int32_t>& out) const {
  if (auto special = vocab_.find(word); special && is_special(*special)) {
    out.push_back(*special);
    return;
  }
  // Byte offsets of the code points: pieces are cut on character boundaries.
  std::vector<size_t> offsets;
  offsets.reserve(word.size() + 1);
  for (size_t i = 0; i < word.size(); ++i)
    if ((static_cast<unsigned char>(word[i]) & 0xC0) != 0x80) offsets.push_back(i);
  offsets.push_back(word.size());
  const size_t n_chars = offsets.size() - 1;
  if (n_chars == 0) return;
  if (n_chars > static_cast<size_t>(options_.max_input_chars_per_word)) {
    out.push_back(unk_id_);
    return;
  }
  const size_t first_piece = out.size();
  std::string candidate;
  size_t start = 0;
  while (start < n_chars) {
    size_t end = n_chars;
    std::optional<int32_t> found;
    while (start < end) {
      std::string_view piece = word.substr(offsets[start], offsets[end] - offsets[start]);
      if (start > 0) {
        candidate.assign(options_.continuation_prefix);
        candidate.append(piece);
        found = vocab_.find(candidate);
      } else {
        found = vocab_.find(piece);
      }
      if (found) break;
      --end;
    }
    if (!found) {  // one unmatched piece makes the whole word unknown
      out.resize(first_piece);
      out.push_back(unk_id_);
      return;
    }
    out.push_back(*found);
    start = end;
  }
}

std::vector<int32_t> WordPieceTokenizer::encode_ids(std::string_view text) const {
  std::vector<int32_t> ids;
  for (const std::string& word : basic_tokenize(text)) wordpiece_ids(word, ids);
  return ids;
}

std::vector<std::string> WordPieceTokenizer::tokenize(std::string_view text) const {
  std::vector<std::string> tokens;
  for (int32_t id : encode_ids(text)) tokens.push_back(vocab_.token(id));
  return tokens;
}

std::string_view truncation_name(Truncation side) {
  return std::ranges::find(kTruncationNames, side, &std::pair<Truncation, std::string_view>::first)
      ->second;
}

std::string_view hf_truncation_side(Truncation side) {
  return side == Truncation::kTail ? "left" : "right";
}

void truncate_ids(std::vector<int32_t>& ids, size_t keep_count, Truncation side) {
  if (ids.size() <= keep_count) return;
  switch (side) {
    case Truncation::kHead:
      ids.resize(keep_count);
      break;
    case Truncation::kTail:
      ids.erase(ids.begin(), ids.end() - static_cast<ptrdiff_t>(keep_count));
      break;
    case Truncation::kHeadTail: {
      const size_t head = (keep_count + 1) / 2, tail = keep_count - head;
      ids.erase(ids.begin() + static_cast<ptrdiff_t>(head),
                ids.end() - static_cast<ptrdiff_t>(tail));
      break;
    }
  }
}

void truncate_longest_first(std::vector<int32_t>& a, std::vector<int32_t>* b, size_t budget,
                            Truncation side) {
  size_t keep_a = a.size(), keep_b = b ? b->size() : 0;
  while (keep_a + keep_b > budget) {
    if (keep_a > keep_b) {
      --keep_a;
    } else {
      --keep_b;
    }
  }
  truncate_ids(a, keep_a, side);
  if (b) truncate_ids(*b, keep_b, side);
}

Encoding WordPieceTokenizer::build_inputs(std::vector<int32_t> a,
                                          std::optional<std::vector<int32_t>> b, size_t max_length,
                                          Truncation side) const {
  const size_t n_special = b ? 3 : 2;
  if (max_length > 0) {
    HEED_CHECK(max_length >= n_special,
               "max_length {} leaves no room for the {} special tokens of a {}", max_length,
               n_special, b ? "pair" : "single sequence");
    truncate_longest_first(a, b ? &*b : nullptr, max_length - n_special, side);
  }
  Encoding e;
  const int32_t cls = cls_id(), sep = sep_id();
  e.input_ids.reserve(a.size() + (b ? b->size() : 0) + n_special);
  e.input_ids.push_back(cls);
  e.input_ids.insert(e.input_ids.end(), a.begin(), a.end());
  e.input_ids.push_back(sep);
  e.token_type_ids.assign(e.input_ids.size(), 0);
  if (b) {
    e.input_ids.insert(e.input_ids.end(), b->begin(), b->end());
    e.input_ids.push_back(sep);
    e.token_type_ids.resize(e.input_ids.size(), 1);
  }
  e.special_tokens_mask.assign(e.input_ids.size(), 0);
  e.special_tokens_mask.front() = 1;
  e.special_tokens_mask[a.size() + 1] = 1;
  e.special_tokens_mask.back() = 1;
  return e;
}

Encoding WordPieceTokenizer::encode(std::string_view text, size_t max_length,
                                    Truncation side) const {
  return build_inputs(encode_ids(text), std::nullopt, max_length, side);
}

Encoding WordPieceTokenizer::encode_pair(std::string_view a, std::string_view b, size_t max_length,
                                         Truncation side) const {
  return build_inputs(encode_ids(a), encode_ids(b), max_length, side);
}

std::string clean_up_tokenization(std::string text) {
  static const std::pair<std::string_view, std::string_view> kRules[] = {
      {" .", "."},     {" ?", "?"},   {" !", "!"},   {" ,", ","},     {" ' ", "'"},
      {" n't", "n't"}, {" 'm", "'m"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
  // Each rule is a left-to-right, non-overlapping replace over the whole string, applied in
  // order, like Python's chained str.replace calls.
  for (const auto& [from, to] : kRules) {
    std::string out;
    out.reserve(text.size());
    size_t pos = 0;
    while (true) {
      size_t hit = text.find(from, pos);
      if (hit == std::string::npos) break;
      out.append(text, pos, hit - pos);
      out.append(to);
      pos = hit + from.size();
    }
    out.append(text, pos, std::string::npos);
    text = std::move(out);
  }
  return text;
}

std::string WordPieceTokenizer::decode(std::span<const int32_t> ids, bool skip_special_tokens,
                                       bool clean_up_tokenization_spaces) const {
  // Special tokens split the text into parts that are detokenized separately (so "##" after
  // a special token is not glued to it), then the parts are joined with spaces.
  std::vector<std::string> parts;
  std::string current;
  auto flush = [&] {
    if (current.empty()) return;
    // " ".join(tokens).replace(" ##", "").strip()
    std::string glued;
    const std::string marker = " " + options_.continuation_prefix;
    size_t pos = 0;
    while (true) {
      size_t hit = current.find(marker, pos);
      if (hit == std::string::npos) break;
      glued.append(current, pos, hit - pos);
      pos = hit + marker.size();
    }
    glued.append(current, pos, std::string::npos);
    size_t b = glued.find_first_not_of(' ');
    size_t e = glued.find_last_not_of(' ');
    if (b != std::string::npos) parts.push_back(glued.substr(b, e - b + 1));
    current.clear();
  };
  bool first = true;
  for (int32_t id : ids) {
    if (is_special(id)) {
      if (skip_special_tokens) continue;
      flush();
      parts.push_back(vocab_.token(id));
      first = true;
      continue;
    }
    if (!first) current.push_back(' ');
    current.append(vocab_.token(id));
    first = false;
  }
  flush();
  std::string text;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) text.push_back(' ');
    text.append(parts[i]);
  }
  return clean_up_tokenization_spaces ? clean_up_tokenization(std::move(text)) : text;
}

}  // namespace heed::data
