// Hugging Face's tokenizer.json (data/hf_tokenizer_json.h): the reader, the writer and encode.
// Byte 0 chooses (its value modulo 2); the rest is:
//   0  a tokenizer.json. An accepted file encodes a fixed text and pair to ids in range (the ids
//      without special tokens are those with them, less the ones the mask marks); written,
//      read back and written again it comes out byte for byte the same, and encodes the same
//   1  a text, and after a NUL byte a second text of a pair, for two fixed tokenizers of
//      tests/data/tokenizer_json (loaded once): BERT's, and a byte-level BPE with added tokens
//      of every flag. Valid UTF-8 must encode to ids in range, and with the added tokens'
//      lstrip and rstrip off the BPE's ids must decode to the text; anything else must be
//      refused with heed::Error
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "data/hf_tokenizer_json.h"
#include "fuzz/fuzz_util.h"
#include "io/text_file.h"
#include "io/utf8.h"

namespace {

using heed::data::Encoding;
using heed::data::TokenizerJson;
using heed::fuzz::write_scratch;

constexpr std::string_view kText = "Hello, the theme <mask>[X] foo\n caf\u00e9 \u6211 [MASK]";
constexpr std::string_view kPair = " then <|endoftext|>";

// Past the reader, heed::Error is no longer a way out: an accepted tokenizer must encode valid
// text, and what the writer writes must read back.
template <typename Body>
void accepted(Body&& body) {
  try {
    body();
  } catch (const heed::Error& e) {
    std::fprintf(stderr, "fuzz: error after the input was accepted: %s\n", e.what());
    std::abort();
  }
}

void check_encoding(const TokenizerJson& t, const Encoding& with, const Encoding& without) {
  HEED_FUZZ_REQUIRE(with.token_type_ids.size() == with.input_ids.size());
  HEED_FUZZ_REQUIRE(with.special_tokens_mask.size() == with.input_ids.size());
  std::vector<int32_t> unmarked;
  for (size_t i = 0; i < with.input_ids.size(); ++i) {
    HEED_FUZZ_REQUIRE(with.input_ids[i] >= 0 && with.input_ids[i] < t.vocab_size());
    if (!with.special_tokens_mask[i]) unmarked.push_back(with.input_ids[i]);
  }
  HEED_FUZZ_REQUIRE(unmarked == without.input_ids);
}

void tokenizer_json(std::string_view bytes) {
  const TokenizerJson t = heed::data::read_tokenizer_json(write_scratch("tokjson/in.json", bytes));
  accepted([&] {
    const Encoding single = t.encode(kText);
    check_encoding(t, single, t.encode(kText, false));
    check_encoding(t, t.encode_pair(kText, kPair), t.encode_pair(kText, kPair, false));

    const std::string first = write_scratch("tokjson/first.json", "");
    heed::data::write_tokenizer_json(first, t);
    const TokenizerJson back = heed::data::read_tokenizer_json(first);
    const std::string second = write_scratch("tokjson/second.json", "");
    heed::data::write_tokenizer_json(second, back);
    HEED_FUZZ_REQUIRE(heed::io::read_text_file(first) == heed::io::read_text_file(second));
    HEED_FUZZ_REQUIRE(back.encode(kText).input_ids == single.input_ids);
  });
}

void text(std::string_view bytes) {
  static const TokenizerJson bert =
      heed::data::read_tokenizer_json("tests/data/tokenizer_json/bert.json");
  static const TokenizerJson flags =
      heed::data::read_tokenizer_json("tests/data/tokenizer_json/added_tokens.json");
  static const TokenizerJson kept_whitespace = [] {
    TokenizerJson t = flags;
    for (heed::data::AddedToken& a : t.added_tokens) a.lstrip = a.rstrip = false;
    return t;
  }();
  const size_t nul = bytes.find('\0');
  const std::string_view a = bytes.substr(0, nul);
  const std::string_view b = nul == std::string_view::npos ? "" : bytes.substr(nul + 1);
  if (heed::io::find_invalid_utf8(a) != std::string_view::npos ||
      heed::io::find_invalid_utf8(b) != std::string_view::npos) {
    try {
      flags.encode_pair(a, b);
    } catch (const heed::Error&) {
      return;
    }
    HEED_FUZZ_REQUIRE(!"invalid UTF-8 was encoded");
  }
  accepted([&] {
    for (const TokenizerJson* t : {&bert, &flags}) {
      check_encoding(*t, t->encode(a), t->encode(a, false));
      check_encoding(*t, t->encode_pair(a, b), t->encode_pair(a, b, false));
    }
    const std::vector<int32_t> ids = kept_whitespace.encode(a).input_ids;
    HEED_FUZZ_REQUIRE(kept_whitespace.bpe->decode_bytes(ids) == a);
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view bytes = heed::fuzz::as_text(data + 1, size - 1);
  heed::fuzz::rejecting_with_heed_errors([&] {
    if (data[0] % 2 == 0) return tokenizer_json(bytes);
    return text(bytes);
  });
  return 0;
}
