// Hugging Face's encode with a tokenizer.json: added tokens first, then the model, then the
// post-processor's template; and TokenizerJson's vocab_size.
#include <unicode/uchar.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "data/hf_tokenizer_json.h"
#include "data/hf_tokenizer_json_template.h"
#include "data/unicode.h"

namespace heed::data {
namespace {

using hf_tokenizer_json::kA;

bool is_word_char(char32_t c) {
  // Rust regex's Unicode \w, which tokenizers' single_word test uses.
  switch (u_charType(static_cast<UChar32>(c))) {
    case U_NON_SPACING_MARK:
    case U_ENCLOSING_MARK:
    case U_COMBINING_SPACING_MARK:
    case U_DECIMAL_DIGIT_NUMBER:
    case U_CONNECTOR_PUNCTUATION:
      return true;
    default:
      return u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_ALPHABETIC) ||
             u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_JOIN_CONTROL);
  }
}

// In valid UTF-8: the offset of the code point after the one at `i`, of the one before `i`, and
// the code point at `i`.
size_t next_char(std::string_view s, size_t i) {
  const auto b = static_cast<unsigned char>(s[i]);
  return i + (b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4);
}
size_t previous_char(std::string_view s, size_t i) {
  do --i;
  while (i > 0 && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80);
  return i;
}
char32_t char_at(std::string_view s, size_t i) {
  return decode_utf8(s.substr(i, next_char(s, i) - i), "text")[0];
}

// A piece of the text: text for the model (id < 0) or an added token.
struct Piece {
  std::string_view text;
  int32_t id = -1;
};

// Hugging Face's AddedVocabulary::find_matches over one piece: leftmost-longest matches, each
// kept only where its single_word allows, widened by its lstrip and rstrip; the search goes on
// after the match as found (a widened one may overlap what it took, as there).
void split_on(std::string_view text, const std::array<std::vector<const AddedToken*>, 256>& first,
              std::vector<Piece>& out) {
  size_t start_offset = 0, pos = 0;
  while (pos < text.size()) {
    const AddedToken* found = nullptr;
    size_t start = pos;
    for (; start < text.size() && !found; ++start) {
      for (const AddedToken* a : first[static_cast<unsigned char>(text[start])]) {
        if (text.substr(start).starts_with(a->content)) {
          found = a;  // the longest: each list runs longest first
          break;
        }
      }
    }
    if (!found) break;
    --start;
    size_t stop = start + found->content.size();
    pos = stop;
    if (found->single_word) {
      const bool word_before = start > 0 && is_word_char(char_at(text, previous_char(text, start)));
      const bool word_after = stop < text.size() && is_word_char(char_at(text, stop));
      if (word_before || word_after) continue;
    }
    if (found->lstrip) {
      size_t s = start;
      while (s > 0 && is_split_whitespace(char_at(text, previous_char(text, s))))
        s = previous_char(text, s);
      start = std::max(s, start_offset);
    }
    if (found->rstrip) {
      while (stop < text.size() && is_split_whitespace(char_at(text, stop)))
        stop = next_char(text, stop);
    }
    if (start_offset < start) out.push_back({text.substr(start_offset, start - start_offset)});
    out.push_back({text.substr(start, stop - start), found->id});
    start_offset = stop;
  }
  if (start_offset < text.size()) out.push_back({text.substr(start_offset)});
}

// The added tokens with this normalized flag by first byte, longest first.
std::array<std::vector<const AddedToken*>, 256> by_first_byte(const std::vector<AddedToken>& all,
                                                              bool normalized) {
  std::array<std::vector<const AddedToken*>, 256> first;
  for (const AddedToken& a : all) {
    if (a.normalized == normalized && !a.content.empty())
      first[static_cast<unsigned char>(a.content[0])].push_back(&a);
  }
  for (auto& list : first) {
    std::ranges::stable_sort(list, std::greater<>(),
                             [](const AddedToken* a) { return a->content.size(); });
  }
  return first;
}

std::vector<int32_t> model_ids(const TokenizerJson& t, std::string_view text) {
  if (size_t bad = find_invalid_utf8(text); bad != std::string_view::npos)
    fail("tokenizer.json encode: the text is not valid UTF-8 (byte {})", bad);
  // Non-normalized tokens are found in the text as written, then normalized ones in the pieces
  // between; with BertNormalizer there are none (refused), and BPE has no normalizer.
  std::vector<Piece> raw, pieces;
  split_on(text, by_first_byte(t.added_tokens, false), raw);
  const auto normalized = by_first_byte(t.added_tokens, true);
  for (const Piece& piece : raw) {
    if (piece.id >= 0) {
      pieces.push_back(piece);
    } else {
      split_on(piece.text, normalized, pieces);
    }
  }
  std::vector<int32_t> ids;
  for (const Piece& piece : pieces) {
    if (piece.id >= 0) {
      ids.push_back(piece.id);
    } else if (t.wordpiece) {
      const std::vector<int32_t> part = t.wordpiece->encode_ids(piece.text);
      ids.insert(ids.end(), part.begin(), part.end());
    } else {
      // tokenizers' ByteLevel puts a space before each piece that does not start with ' ';
      // the BPE, given one, adds none of its own.
      std::string spaced;
      if (t.bpe->options().add_prefix_space && !piece.text.starts_with(' '))
        spaced.append(1, ' ').append(piece.text);
      const std::vector<int32_t> part = t.bpe->encode(spaced.empty() ? piece.text : spaced);
      ids.insert(ids.end(), part.begin(), part.end());
    }
  }
  return ids;
}

Encoding apply_template(const std::vector<TemplatePiece>& pieces, const std::vector<int32_t>& a,
                        const std::vector<int32_t>* b, bool add_special_tokens) {
  Encoding e;
  const auto add = [&](int32_t id, int32_t type_id, int32_t special) {
    e.input_ids.push_back(id);
    e.token_type_ids.push_back(type_id);
    e.special_tokens_mask.push_back(special);
  };
  for (const TemplatePiece& piece : pieces) {
    if (piece.kind == TemplatePiece::Kind::kSpecial) {
      if (add_special_tokens)
        for (const TokenWithId& t : piece.tokens) add(t.id, piece.type_id, 1);
    } else {
      HEED_CHECK(piece.kind == kA || b != nullptr,
                 "tokenizer.json encode: the single-sequence template names $B");
      for (int32_t id : piece.kind == kA ? a : *b) add(id, piece.type_id, 0);
    }
  }
  return e;
}

}  // namespace

int32_t TokenizerJson::vocab_size() const {
  HEED_CHECK(wordpiece.has_value() != bpe.has_value(),
             "tokenizer.json: exactly one model (WordPiece or byte-level BPE) must be set");
  return wordpiece ? wordpiece->vocab_size() : bpe->vocab_size();
}

Encoding TokenizerJson::encode(std::string_view text, bool add_special_tokens) const {
  vocab_size();  // checks that there is one model
  return apply_template(post_processor.single, model_ids(*this, text), nullptr, add_special_tokens);
}

Encoding TokenizerJson::encode_pair(std::string_view a, std::string_view b,
                                    bool add_special_tokens) const {
  vocab_size();
  const std::vector<int32_t> b_ids = model_ids(*this, b);
  return apply_template(post_processor.pair, model_ids(*this, a), &b_ids, add_special_tokens);
}

}  // namespace heed::data
