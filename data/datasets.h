#pragma once
// Datasets: indexable collections of Examples, one kind per task. Text files are read and
// tokenized once at construction; token streams come from a memory-mapped TokenCache.
// get() is const and thread-safe, so a loader may call it from its prefetch thread.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "data/batch.h"
#include "data/text_tokenizer.h"
#include "data/wordpiece.h"

namespace heed::data {

class TokenCache;

// How often a class occurs in a data set's examples (a tag: in its words), and where first.
struct LabelCount {
  std::string label;
  size_t count = 0;
  std::string first;  // "file:line"
};

class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual size_t size() const = 0;
  virtual Example get(size_t index) const = 0;
  // The classes of a classification data set with their counts, in class id order (a class
  // without examples is left out); empty for the other kinds. A class set taken from the data
  // itself turns a typo in one row into a class: these name it.
  virtual std::vector<LabelCount> label_counts() const { return {}; }
  // For a data set read as one stream of text (a language model's): its tokens per byte of
  // the corpus, which turns a loss per token into bits per byte, the measure that compares
  // models across tokenizers. Unset for the other kinds.
  virtual std::optional<double> tokens_per_byte() const { return std::nullopt; }
};

// MLM pretraining examples: each document of the cache is cut into consecutive windows of at
// most max_length - 2 tokens (windows never cross documents), each wrapped as [CLS] .. [SEP].
class MlmWindowDataset : public Dataset {
 public:
  MlmWindowDataset(std::shared_ptr<const TokenCache> cache, int32_t cls_id, int32_t sep_id,
                   size_t max_length);
  size_t size() const override { return windows_.size(); }
  Example get(size_t index) const override;
  // The corpus's tokens (without the [CLS] and [SEP] each window adds) per byte of its file:
  // a masked token's loss times this is its cost per byte, comparable across tokenizers.
  std::optional<double> tokens_per_byte() const override;

 private:
  std::shared_ptr<const TokenCache> cache_;
  int32_t cls_id_, sep_id_;
  std::vector<std::pair<uint64_t, uint64_t>> windows_;  // [begin, end) token offsets
};

// Causal LM examples over the stream "doc0 <sep> doc1 <sep> ...": window i holds the
// context_length + 1 tokens starting at i * context_length (consecutive windows overlap by
// one token, so every stream token is a target exactly once). The last partial window is
// kept when it has at least 2 tokens.
class CausalWindowDataset : public Dataset {
 public:
  CausalWindowDataset(std::shared_ptr<const TokenCache> cache, int32_t separator_id,
                      size_t context_length);
  size_t size() const override { return num_windows_; }
  Example get(size_t index) const override;
  uint64_t stream_length() const { return stream_length_; }
  // The stream's tokens (document separators included) per byte of the corpus file.
  std::optional<double> tokens_per_byte() const override;

 private:
  std::shared_ptr<const TokenCache> cache_;
  int32_t separator_id_;
  size_t context_length_;
  uint64_t stream_length_ = 0;
  size_t num_windows_ = 0;
};

// Consecutive windows of `window_length` tokens of the same stream "doc0 <sep> doc1 <sep> ...",
// without overlap (T5's packed pretraining examples: each document ends in </s>, the documents
// run on across windows); the last partial window is kept when it has at least 2 tokens.
class PackedWindowDataset : public Dataset {
 public:
  PackedWindowDataset(std::shared_ptr<const TokenCache> cache, int32_t separator_id,
                      size_t window_length);
  size_t size() const override { return num_windows_; }
  Example get(size_t index) const override;
  // No tokens_per_byte: what a model learns from these windows (span corruption's targets)
  // does not cover the stream, so a loss per token of it is no cost per byte.

 private:
  std::shared_ptr<const TokenCache> cache_;
  int32_t separator_id_;
  size_t window_length_;
  uint64_t stream_length_ = 0;
  size_t num_windows_ = 0;
};

// Label names of a classification file: given, or the sorted distinct names of the file.
// Index i of the vector is class id i.
using LabelNames = std::vector<std::string>;

// The sorted distinct labels of a classification file ("label<TAB>text" or
// "label<TAB>text_a<TAB>text_b" lines): the label set a TextClassificationDataset takes when it
// is given none. It reads the labels alone, without tokenizing, so a config check can know a
// classifier's classes before any work.
LabelNames classification_label_names(const std::string& tsv_path);

// Sequence classification from TSV lines "label<TAB>text" or "label<TAB>text_a<TAB>text_b".
// With `labels` empty, the label set is the file's own names, sorted; pass the training
// set's labels() when loading validation and test files so ids agree. Texts longer than
// max_length ids lose ids from the side `truncation` gives up.
class TextClassificationDataset : public Dataset {
 public:
  // BERT's WordPiece or RoBERTa's byte-level BPE (TextTokenizer::encode_inputs).
  TextClassificationDataset(const std::string& tsv_path, const TextTokenizer& tokenizer,
                            size_t max_length, LabelNames labels = {},
                            Truncation truncation = Truncation::kHead);
  TextClassificationDataset(const std::string& tsv_path, const WordPieceTokenizer& tokenizer,
                            size_t max_length, LabelNames labels = {},
                            Truncation truncation = Truncation::kHead)
      : TextClassificationDataset(tsv_path, TextTokenizer(tokenizer), max_length, std::move(labels),
                                  truncation) {}
  size_t size() const override { return examples_.size(); }
  Example get(size_t index) const override { return examples_[index]; }
  const LabelNames& labels() const { return labels_; }
  std::vector<LabelCount> label_counts() const override { return label_counts_; }

 private:
  std::vector<Example> examples_;
  LabelNames labels_;
  std::vector<LabelCount> label_counts_;
};

// Token classification from CoNLL-style files: one "word<TAB>tag" per line, a blank line
// after each sentence. Each word is tokenized on its own; its tag goes on its first
// word piece and -100 on the others and on [CLS]/[SEP] (transformers' run_ner alignment); a
// RoBERTa tokenizer marks them <s> and </s>.
// Sentences longer than max_length are truncated.
class TokenClassificationDataset : public Dataset {
 public:
  // BERT's WordPiece or RoBERTa's byte-level BPE (TextTokenizer::append_word_ids).
  TokenClassificationDataset(const std::string& conll_path, const TextTokenizer& tokenizer,
                             size_t max_length, LabelNames labels = {});
  TokenClassificationDataset(const std::string& conll_path, const WordPieceTokenizer& tokenizer,
                             size_t max_length, LabelNames labels = {})
      : TokenClassificationDataset(conll_path, TextTokenizer(tokenizer), max_length,
                                   std::move(labels)) {}
  size_t size() const override { return examples_.size(); }
  Example get(size_t index) const override { return examples_[index]; }
  const LabelNames& labels() const { return labels_; }
  std::vector<LabelCount> label_counts() const override { return label_counts_; }

 private:
  std::vector<Example> examples_;
  LabelNames labels_;
  std::vector<LabelCount> label_counts_;
};

// The first `count` examples of another dataset (all of them if it has fewer), in file order
// as Hugging Face's max_train_samples takes them: a training set cut down to fewer labels. A
// random sample only if the file is in random order (the prepared datasets/ files are).
class FirstExamples : public Dataset {
 public:
  FirstExamples(std::shared_ptr<const Dataset> all, size_t count)
      : all_(std::move(all)), count_(std::min(count, all_->size())) {}
  size_t size() const override { return count_; }
  Example get(size_t index) const override { return all_->get(index); }

 private:
  std::shared_ptr<const Dataset> all_;
  size_t count_;
};

// Text -> ids, as a seq2seq side needs them (e.g. a CharTokenizer's encode, or a WordPiece
// encode with [CLS]/[SEP]).
using EncodeFn = std::function<std::vector<int32_t>(std::string_view)>;

// Seq2seq pairs from TSV lines "source<TAB>target". Source ids go to input_ids, target ids
// (without start/end tokens; collate_seq2seq adds them) to target_ids; each side is cut to
// its max length (0 = no limit; the target limit leaves room for the start/end token).
class Seq2SeqDataset : public Dataset {
 public:
  Seq2SeqDataset(const std::string& tsv_path, const EncodeFn& encode_source,
                 const EncodeFn& encode_target, size_t max_source_length = 0,
                 size_t max_target_length = 0);
  size_t size() const override { return examples_.size(); }
  Example get(size_t index) const override { return examples_[index]; }

 private:
  std::vector<Example> examples_;
};

// The sorted distinct tags of CoNLL files ("word<TAB>tag" lines): a tag set for every split of
// a tagging task, since rare tags (Brown has 472) may occur in validation or test only. The
// model then has a class for them that training never shows it, and counts them as errors.
LabelNames conll_tag_names(const std::vector<std::string>& paths);

// Splits a TSV line on tabs.
std::vector<std::string_view> split_tabs(std::string_view line);

}  // namespace heed::data
