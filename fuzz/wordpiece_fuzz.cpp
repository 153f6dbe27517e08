// The WordPiece tokenizer (data/wordpiece.h) on arbitrary text with a fixed small vocabulary
// (BERT's specials, English with continuations, accented Latin, Greek, CJK, Hangul).
//
// Input: byte 0 chooses the options (bit 0 lower-case, bits 1-2 strip_accents unset / false /
// true, bit 3 tokenize_chinese_chars, bits 4-5 the truncation side), byte 1 max_length (0: no
// limit); the rest is the text, and after a NUL byte, if any, the second text of a pair.
// Byte 2 on, read as 16-bit numbers, are also ids for decode. Valid UTF-8 must tokenize
// without an error; anything else must be rejected with heed::Error.
#include <string>

#include "data/vocab.h"
#include "data/wordpiece.h"
#include "fuzz/fuzz_util.h"
#include "fuzz/wordpiece_checks.h"
#include "io/utf8.h"

namespace {

const heed::data::Vocab& fixed_vocab() {
  static const heed::data::Vocab vocab(std::vector<std::string>{"[PAD]",
                                                                "[unused0]",
                                                                "[CLS]",
                                                                "[SEP]",
                                                                "[UNK]",
                                                                "[MASK]",
                                                                "the",
                                                                "The",
                                                                "quick",
                                                                "brown",
                                                                "fox",
                                                                "jump",
                                                                "##s",
                                                                "##ed",
                                                                "over",
                                                                "lazy",
                                                                "dog",
                                                                ".",
                                                                ",",
                                                                "!",
                                                                "?",
                                                                "'",
                                                                "\"",
                                                                "-",
                                                                "(",
                                                                ")",
                                                                "$",
                                                                "@",
                                                                ":",
                                                                "un",
                                                                "##aff",
                                                                "##able",
                                                                "##a",
                                                                "##b",
                                                                "##c",
                                                                "a",
                                                                "b",
                                                                "c",
                                                                "cafe",
                                                                "caf\xC3\xA9",
                                                                "naive",
                                                                "re",
                                                                "##sum",
                                                                "##e",
                                                                "##\xC3\xA9",
                                                                "\xE4\xB8\xAD",
                                                                "\xE5\x9B\xBD",
                                                                "\xE4\xBA\xBA",
                                                                "\xEF\xBC\x8C",
                                                                "\xE3\x80\x82",
                                                                "play",
                                                                "##ing",
                                                                "##er",
                                                                "can",
                                                                "t",
                                                                "don",
                                                                "s",
                                                                "i",
                                                                "\xED\x95\x9C\xEA\xB5\xAD",  // 한국
                                                                "\xC3\x9F",
                                                                "ss",
                                                                "stra\xC3\x9F"
                                                                "e",
                                                                "strasse",
                                                                "\xCF\x83",
                                                                "##\xCF\x82",
                                                                "\xCE\xBF",
                                                                "1",
                                                                "2",
                                                                "##3",
                                                                "12",
                                                                "e",
                                                                "z",
                                                                "##z",
                                                                "##",
                                                                "###",
                                                                "[",
                                                                "]",
                                                                "##[",
                                                                "##]",
                                                                "UNK",
                                                                "##UNK"});
  return vocab;
}

heed::data::Truncation side_of(uint8_t bits) {
  switch (bits % 3) {
    case 0:
      return heed::data::Truncation::kHead;
    case 1:
      return heed::data::Truncation::kTail;
    default:
      return heed::data::Truncation::kHeadTail;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const uint8_t flags = data[0];
  heed::data::WordPieceOptions options;
  options.lowercase = flags & 1;
  if ((flags >> 1) % 4 == 1) options.strip_accents = false;
  if ((flags >> 1) % 4 >= 2) options.strip_accents = true;
  options.tokenize_chinese_chars = (flags >> 3) & 1;
  const heed::data::WordPieceTokenizer tokenizer(fixed_vocab(), options);
  const size_t max_length = data[1];

  const std::string_view input = heed::fuzz::as_text(data + 2, size - 2);
  const size_t nul = input.find('\0');
  const std::string_view a = input.substr(0, nul);
  std::optional<std::string_view> b;
  if (nul != std::string_view::npos) b = input.substr(nul + 1);
  const auto valid = [](std::string_view text) {
    return heed::io::find_invalid_utf8(text) == std::string_view::npos;
  };
  const heed::data::Truncation side = side_of(flags >> 4);
  if (valid(input)) {
    heed::fuzz::check_tokenizer_on(tokenizer, a, b, max_length, side);
  } else {
    // The documented rejection, and nothing else. (b is read only when max_length leaves
    // room for a pair.)
    bool rejected = false;
    try {
      heed::fuzz::check_tokenizer_on(tokenizer, a, b, max_length, side);
    } catch (const heed::Error&) {
      rejected = true;
    }
    HEED_FUZZ_REQUIRE(rejected || valid(a));
  }

  // decode takes any ids of the vocabulary.
  std::vector<int32_t> ids;
  for (size_t i = 2; i + 1 < size; i += 2) {
    ids.push_back((data[i] | data[i + 1] << 8) % tokenizer.vocab_size());
  }
  tokenizer.decode(ids, flags & 1, flags & 2);
  return 0;
}
