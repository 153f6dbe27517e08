#include "data/datasets.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

#include "base/error.h"
#include "data/token_cache.h"
#include "data/unicode.h"
#include "data/wordpiece.h"

namespace heed::data {
namespace {

// Token `position` of the stream in which every document of `cache` is followed by `separator`.
int32_t stream_token(const TokenCache& cache, int32_t separator, uint64_t position) {
  // Document d occupies stream positions [begin(d) + d, end(d) + d], the last being its
  // separator. Find d by binary search over the documents.
  uint64_t lo = 0, hi = cache.num_documents();
  while (hi - lo > 1) {
    const uint64_t mid = (lo + hi) / 2;
    if (cache.document_begin(mid) + mid <= position) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  const uint64_t offset = position - lo;  // token index if inside the document
  return offset < cache.document_end(lo) ? cache[offset] : separator;
}

// Calls f(line, line_no) for every line of a text file (line ends stripped), after checking
// that the line is valid UTF-8. Errors from f are prefixed with file:line.
void for_each_line(const std::string& path,
                   const std::function<void(std::string_view, size_t)>& f) {
  std::ifstream in(path, std::ios::binary);
  HEED_CHECK(in.good(), "{}: cannot open file", path);
  std::string line;
  size_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (size_t bad = find_invalid_utf8(line); bad != std::string::npos)
      fail("{}:{}: invalid UTF-8 at byte {} of the line", path, line_no, bad);
    try {
      f(line, line_no);
    } catch (const Error& e) {
      fail("{}:{}: {}", path, line_no, e.what());
    }
  }
}

// The fields of one line of a classification file: a label and a text, or a text pair.
std::vector<std::string_view> classification_fields(std::string_view line) {
  auto fields = split_tabs(line);
  HEED_CHECK(fields.size() == 2 || fields.size() == 3,
             "expected label<TAB>text or label<TAB>text_a<TAB>text_b, found {} field(s)",
             fields.size());
  HEED_CHECK(!fields[0].empty(), "empty label");
  return fields;
}

// Label name -> id; when `given` is empty the names are collected from `names`, sorted.
std::map<std::string, int64_t, std::less<>> label_index(LabelNames& given,
                                                        const std::vector<std::string>& names) {
  if (given.empty()) {
    given = names;
    std::sort(given.begin(), given.end());
    given.erase(std::unique(given.begin(), given.end()), given.end());
  }
  std::map<std::string, int64_t, std::less<>> index;
  for (size_t i = 0; i < given.size(); ++i) index[given[i]] = static_cast<int64_t>(i);
  return index;
}

// The classes of a file's examples, counted as they are read, with the line of each one's first.
class LabelCounter {
 public:
  void add(std::string_view label, size_t line_no) {
    auto it = counts_.find(label);
    if (it == counts_.end()) it = counts_.emplace(std::string(label), Count{0, line_no}).first;
    ++it->second.count;
  }
  // In the order of `labels`; a class without examples is left out.
  std::vector<LabelCount> in_order(const LabelNames& labels, const std::string& path) const {
    std::vector<LabelCount> out;
    for (const std::string& label : labels) {
      if (auto it = counts_.find(label); it != counts_.end()) {
        out.push_back({label, it->second.count, fmt::format("{}:{}", path, it->second.first_line)});
      }
    }
    return out;
  }

 private:
  struct Count {
    size_t count, first_line;
  };
  std::map<std::string, Count, std::less<>> counts_;
};

}  // namespace

LabelNames conll_tag_names(const std::vector<std::string>& paths) {
  std::set<std::string, std::less<>> tags;
  for (const std::string& path : paths) {
    for_each_line(path, [&](std::string_view line, size_t) {
      if (line.empty()) return;
      auto fields = split_tabs(line);
      HEED_CHECK(fields.size() == 2 && !fields[1].empty(), "expected word<TAB>tag");
      if (tags.find(fields[1]) == tags.end()) tags.emplace(fields[1]);
    });
  }
  return LabelNames(tags.begin(), tags.end());
}

std::vector<std::string_view> split_tabs(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  while (true) {
    size_t tab = line.find('\t', start);
    fields.push_back(line.substr(start, tab == std::string_view::npos ? tab : tab - start));
    if (tab == std::string_view::npos) break;
    start = tab + 1;
  }
  return fields;
}

MlmWindowDataset::MlmWindowDataset(std::shared_ptr<const TokenCache> cache, int32_t cls_id,
                                   int32_t sep_id, size_t max_length)
    : cache_(std::move(cache)), cls_id_(cls_id), sep_id_(sep_id) {
  HEED_CHECK(max_length > 2, "MLM max_length {} leaves no room for text beside [CLS]/[SEP]",
             max_length);
  const uint64_t span = max_length - 2;
  for (uint64_t d = 0; d < cache_->num_documents(); ++d)
    for (uint64_t b = cache_->document_begin(d); b < cache_->document_end(d); b += span)
      windows_.emplace_back(b, std::min(b + span, cache_->document_end(d)));
}

Example MlmWindowDataset::get(size_t index) const {
  HEED_CHECK(index < windows_.size(), "MLM example {} out of range ({})", index, windows_.size());
  const auto [begin, end] = windows_[index];
  Example e;
  e.input_ids.resize(end - begin + 2);
  e.input_ids.front() = cls_id_;
  cache_->copy(begin, end, e.input_ids.data() + 1);
  e.input_ids.back() = sep_id_;
  return e;
}

CausalWindowDataset::CausalWindowDataset(std::shared_ptr<const TokenCache> cache,
                                         int32_t separator_id, size_t context_length)
    : cache_(std::move(cache)), separator_id_(separator_id), context_length_(context_length) {
  HEED_CHECK(context_length > 0, "causal LM context_length must be positive");
  // Every document is followed by one separator.
  stream_length_ = cache_->num_tokens() + cache_->num_documents();
  num_windows_ = stream_length_ < 2 ? 0 : (stream_length_ - 2) / context_length_ + 1;
}

std::optional<double> MlmWindowDataset::tokens_per_byte() const {
  if (cache_->corpus_bytes() == 0) return std::nullopt;
  return static_cast<double>(cache_->num_tokens()) / static_cast<double>(cache_->corpus_bytes());
}

std::optional<double> CausalWindowDataset::tokens_per_byte() const {
  if (cache_->corpus_bytes() == 0) return std::nullopt;
  return static_cast<double>(stream_length_) / static_cast<double>(cache_->corpus_bytes());
}

Example CausalWindowDataset::get(size_t index) const {
  HEED_CHECK(index < num_windows_, "causal LM example {} out of range ({})", index, num_windows_);
  const uint64_t begin = static_cast<uint64_t>(index) * context_length_;
  const uint64_t end = std::min<uint64_t>(begin + context_length_ + 1, stream_length_);
  Example e;
  e.input_ids.reserve(end - begin);
  for (uint64_t p = begin; p < end; ++p)
    e.input_ids.push_back(stream_token(*cache_, separator_id_, p));
  return e;
}

PackedWindowDataset::PackedWindowDataset(std::shared_ptr<const TokenCache> cache,
                                         int32_t separator_id, size_t window_length)
    : cache_(std::move(cache)), separator_id_(separator_id), window_length_(window_length) {
  HEED_CHECK(window_length > 1, "packed windows of {} tokens: they need at least 2", window_length);
  stream_length_ = cache_->num_tokens() + cache_->num_documents();
  num_windows_ = static_cast<size_t>(stream_length_ / window_length_);
  if (stream_length_ % window_length_ >= 2) ++num_windows_;
}

Example PackedWindowDataset::get(size_t index) const {
  HEED_CHECK(index < num_windows_, "packed window {} out of range ({})", index, num_windows_);
  const uint64_t begin = static_cast<uint64_t>(index) * window_length_;
  const uint64_t end = std::min<uint64_t>(begin + window_length_, stream_length_);
  Example e;
  e.input_ids.reserve(end - begin);
  for (uint64_t p = begin; p < end; ++p)
    e.input_ids.push_back(stream_token(*cache_, separator_id_, p));
  return e;
}

LabelNames classification_label_names(const std::string& tsv_path) {
  std::set<std::string, std::less<>> names;
  for_each_line(tsv_path, [&](std::string_view line, size_t) {
    if (line.empty()) return;
    const std::string_view label = classification_fields(line)[0];
    if (names.find(label) == names.end()) names.emplace(label);
  });
  HEED_CHECK(!names.empty(), "{}: no examples", tsv_path);
  return LabelNames(names.begin(), names.end());
}

TextClassificationDataset::TextClassificationDataset(const std::string& tsv_path,
                                                     const TextTokenizer& tokenizer,
                                                     size_t max_length, LabelNames labels,
                                                     Truncation truncation)
    : labels_(std::move(labels)) {
  struct Row {
    std::string label, a;
    std::optional<std::string> b;
    size_t line_no;
  };
  std::vector<Row> rows;
  std::vector<std::string> names;
  for_each_line(tsv_path, [&](std::string_view line, size_t line_no) {
    if (line.empty()) return;
    auto fields = classification_fields(line);
    Row row{std::string(fields[0]), std::string(fields[1]), std::nullopt, line_no};
    if (fields.size() == 3) row.b = std::string(fields[2]);
    names.push_back(row.label);
    rows.push_back(std::move(row));
  });
  HEED_CHECK(!rows.empty(), "{}: no examples", tsv_path);
  auto index = label_index(labels_, names);
  LabelCounter counter;
  for (const Row& row : rows) counter.add(row.label, row.line_no);
  label_counts_ = counter.in_order(labels_, tsv_path);
  for (const Row& row : rows) {
    auto it = index.find(row.label);
    HEED_CHECK(it != index.end(), "{}:{}: unknown label '{}' (known: {})", tsv_path, row.line_no,
               row.label, fmt::join(labels_, ", "));
    Encoding enc = tokenizer.encode_inputs(
        row.a, row.b ? std::optional<std::string_view>(*row.b) : std::nullopt, max_length,
        truncation);
    Example e;
    e.input_ids = std::move(enc.input_ids);
    e.token_type_ids = std::move(enc.token_type_ids);
    e.label = it->second;
    examples_.push_back(std::move(e));
  }
}

TokenClassificationDataset::TokenClassificationDataset(const std::string& conll_path,
                                                       const TextTokenizer& tokenizer,
                                                       size_t max_length, LabelNames labels)
    : labels_(std::move(labels)) {
  HEED_CHECK(max_length > 2, "token classification max_length must exceed 2");
  struct Sentence {
    std::vector<std::string> words, tags;
    size_t line_no;
  };
  std::vector<Sentence> sentences(1);
  std::vector<std::string> names;
  for_each_line(conll_path, [&](std::string_view line, size_t line_no) {
    if (line.empty()) {
      if (!sentences.back().words.empty()) sentences.emplace_back();
      return;
    }
    auto fields = split_tabs(line);
    HEED_CHECK(fields.size() == 2 && !fields[0].empty() && !fields[1].empty(),
               "expected word<TAB>tag");
    if (sentences.back().words.empty()) sentences.back().line_no = line_no;
    sentences.back().words.emplace_back(fields[0]);
    sentences.back().tags.emplace_back(fields[1]);
    names.emplace_back(fields[1]);
  });
  if (sentences.back().words.empty()) sentences.pop_back();
  HEED_CHECK(!sentences.empty(), "{}: no sentences", conll_path);
  auto index = label_index(labels_, names);
  LabelCounter counter;
  for (const Sentence& s : sentences) {
    // A sentence's words are on consecutive lines.
    for (size_t w = 0; w < s.tags.size(); ++w) counter.add(s.tags[w], s.line_no + w);
  }
  label_counts_ = counter.in_order(labels_, conll_path);
  const int32_t cls = tokenizer.start_id(), sep = tokenizer.end_id();
  for (const Sentence& s : sentences) {
    Example e;
    e.input_ids.push_back(cls);
    e.token_labels.push_back(static_cast<int32_t>(kIgnoreIndex));
    std::vector<int32_t> pieces;
    for (size_t w = 0; w < s.words.size(); ++w) {
      auto it = index.find(s.tags[w]);
      HEED_CHECK(it != index.end(), "{}: sentence at line {}: unknown tag '{}'", conll_path,
                 s.line_no, s.tags[w]);
      pieces.clear();
      tokenizer.append_word_ids(s.words[w], pieces);
      for (size_t p = 0; p < pieces.size(); ++p) {
        e.input_ids.push_back(pieces[p]);
        e.token_labels.push_back(p == 0 ? static_cast<int32_t>(it->second)
                                        : static_cast<int32_t>(kIgnoreIndex));
      }
    }
    if (e.input_ids.size() > max_length - 1) {
      e.input_ids.resize(max_length - 1);
      e.token_labels.resize(max_length - 1);
    }
    e.input_ids.push_back(sep);
    e.token_labels.push_back(static_cast<int32_t>(kIgnoreIndex));
    e.token_type_ids.assign(e.input_ids.size(), 0);
    examples_.push_back(std::move(e));
  }
}

Seq2SeqDataset::Seq2SeqDataset(const std::string& tsv_path, const EncodeFn& encode_source,
                               const EncodeFn& encode_target, size_t max_source_length,
                               size_t max_target_length) {
  HEED_CHECK(max_target_length != 1, "seq2seq max_target_length 1 leaves no room for targets");
  for_each_line(tsv_path, [&](std::string_view line, size_t) {
    if (line.empty()) return;
    auto fields = split_tabs(line);
    HEED_CHECK(fields.size() == 2, "expected source<TAB>target, found {} field(s)", fields.size());
    HEED_CHECK(!fields[0].empty() && !fields[1].empty(), "empty source or target");
    Example e;
    e.input_ids = encode_source(fields[0]);
    e.target_ids = encode_target(fields[1]);
    HEED_CHECK(!e.input_ids.empty(), "source encodes to no tokens");
    if (max_source_length && e.input_ids.size() > max_source_length)
      e.input_ids.resize(max_source_length);
    // The decoder sees [start] + target and predicts target + [end]: both are one longer.
    if (max_target_length && e.target_ids.size() + 1 > max_target_length)
      e.target_ids.resize(max_target_length - 1);
    examples_.push_back(std::move(e));
  });
  HEED_CHECK(!examples_.empty(), "{}: no examples", tsv_path);
}

}  // namespace heed::data
