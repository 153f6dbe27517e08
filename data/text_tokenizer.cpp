#include "data/text_tokenizer.h"

#include "autograd/error.h"
#include "data/tokenizer_io.h"

namespace heed::data {

TextTokenizer TextTokenizer::load(const std::string& dir) {
  if (tokenizer_class(dir) == "HeedCharTokenizer") return TextTokenizer(load_char_tokenizer(dir));
  return TextTokenizer(load_wordpiece(dir));
}

void TextTokenizer::save(const std::string& dir, int64_t max_length, Truncation truncation) const {
  if (wordpiece_) {
    save_wordpiece(*wordpiece_, dir, max_length, truncation);
  } else {
    save_char_tokenizer(*chars_, dir);
  }
}

int64_t TextTokenizer::vocab_size() const {
  return wordpiece_ ? wordpiece_->vocab_size() : chars_->vocab_size();
}

std::vector<int32_t> TextTokenizer::encode(std::string_view text) const {
  return wordpiece_ ? wordpiece_->encode_ids(text) : chars_->encode(text);
}

std::vector<int32_t> TextTokenizer::encode_source(std::string_view text) const {
  return wordpiece_ ? wordpiece_->encode(text).input_ids : chars_->encode(text);
}

std::vector<int32_t> TextTokenizer::encode_target(std::string_view text) const {
  return wordpiece_ ? wordpiece_->encode_ids(text) : chars_->encode_target(text);
}

std::string TextTokenizer::decode(std::span<const int32_t> ids) const {
  return wordpiece_ ? wordpiece_->decode(ids) : chars_->decode(ids);
}

std::string TextTokenizer::decode_source(std::span<const int32_t> ids) const {
  return wordpiece_ ? wordpiece_->decode(ids) : chars_->decode_source(ids);
}

const std::string& TextTokenizer::token(int32_t id) const {
  return wordpiece_ ? wordpiece_->vocab().token(id) : chars_->vocab().token(id);
}

int32_t TextTokenizer::pad_id() const {
  return wordpiece_ ? wordpiece_->pad_id() : chars_->pad_id();
}

int32_t TextTokenizer::start_id() const {
  return wordpiece_ ? wordpiece_->cls_id() : chars_->bos_id();
}

int32_t TextTokenizer::end_id() const {
  return wordpiece_ ? wordpiece_->sep_id() : chars_->eos_id();
}

const WordPieceTokenizer& TextTokenizer::wordpiece(std::string_view who) const {
  HEED_CHECK(wordpiece_.has_value(),
             "{} needs a WordPiece tokenizer; this one is a character tokenizer", who);
  return *wordpiece_;
}

}  // namespace heed::data
