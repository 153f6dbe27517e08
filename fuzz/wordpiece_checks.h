#pragma once
// The promises of WordPieceTokenizer (data/wordpiece.h) that the vocab and wordpiece targets
// check on every text the tokenizer accepts.
#include <optional>
#include <string_view>
#include <vector>

#include "data/wordpiece.h"
#include "fuzz/fuzz_util.h"

namespace heed::fuzz {

inline void check_ids(const data::WordPieceTokenizer& t, const std::vector<int32_t>& ids) {
  for (int32_t id : ids) HEED_FUZZ_REQUIRE(id >= 0 && id < t.vocab_size());
}

inline void check_encoding(const data::WordPieceTokenizer& t, const data::Encoding& e,
                           size_t max_length, size_t n_special) {
  check_ids(t, e.input_ids);
  HEED_FUZZ_REQUIRE(e.input_ids.size() >= n_special);
  HEED_FUZZ_REQUIRE(max_length == 0 || e.input_ids.size() <= max_length);
  HEED_FUZZ_REQUIRE(e.token_type_ids.size() == e.input_ids.size());
  HEED_FUZZ_REQUIRE(e.special_tokens_mask.size() == e.input_ids.size());
  HEED_FUZZ_REQUIRE(e.input_ids.front() == t.cls_id() && e.input_ids.back() == t.sep_id());
  HEED_FUZZ_REQUIRE(e.token_type_ids.front() == 0);
  HEED_FUZZ_REQUIRE(e.token_type_ids.back() == (n_special == 3 ? 1 : 0));
}

// Tokenizes `a` (and the pair a, b), cut to max_length from `side`, and decodes the result.
// Texts that are not UTF-8 are rejected with heed::Error.
inline void check_tokenizer_on(const data::WordPieceTokenizer& t, std::string_view a,
                               std::optional<std::string_view> b, size_t max_length,
                               data::Truncation side) {
  const std::vector<int32_t> ids = t.encode_ids(a);
  check_ids(t, ids);
  const std::vector<std::string> pieces = t.tokenize(a);
  HEED_FUZZ_REQUIRE(pieces.size() == ids.size());
  for (size_t i = 0; i < ids.size(); ++i) HEED_FUZZ_REQUIRE(t.vocab().token(ids[i]) == pieces[i]);
  for (const std::string& word : t.basic_tokenize(a)) {
    HEED_FUZZ_REQUIRE(!word.empty());
    std::vector<int32_t> word_ids;
    t.wordpiece_ids(word, word_ids);
    check_ids(t, word_ids);
  }
  t.decode(ids);
  t.decode(ids, /*skip_special_tokens=*/false, /*clean_up_tokenization_spaces=*/false);

  // encode needs [CLS] and [SEP], and room for them.
  if (!t.vocab().contains(t.options().cls_token) || !t.vocab().contains(t.options().sep_token)) {
    return;
  }
  if (max_length == 0 || max_length >= 2) {
    const data::Encoding e = t.encode(a, max_length, side);
    check_encoding(t, e, max_length, 2);
    t.decode(e.input_ids);
  }
  if (b && (max_length == 0 || max_length >= 3)) {
    const data::Encoding e = t.encode_pair(a, *b, max_length, side);
    check_encoding(t, e, max_length, 3);
    t.decode(e.input_ids, false, true);
  }
}

}  // namespace heed::fuzz
