// The vocabulary loader (data/vocab.h) on arbitrary bytes as vocab.txt, then the WordPiece
// tokenizer (data/wordpiece.h) over that vocabulary on a fixed text and on texts made of the
// vocabulary's own tokens, so that odd tokens meet the matcher.
#include <string>

#include "data/vocab.h"
#include "data/wordpiece.h"
#include "fuzz/fuzz_util.h"
#include "fuzz/wordpiece_checks.h"

namespace {

constexpr std::string_view kText =
    "[CLS] The quick brown fox jumps over the lazy dog. Caf\xC3\xA9 na\xC3\xAFve "
    "\xE4\xB8\xAD\xE5\x9B\xBD\xE4\xBA\xBA, don't [MASK] unaffable!? [SEP]";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = heed::fuzz::write_scratch("vocab.txt", heed::fuzz::as_text(data, size));
  std::optional<heed::data::Vocab> vocab;
  heed::fuzz::rejecting_with_heed_errors([&] { vocab = heed::data::Vocab::load(path); });
  if (!vocab) return 0;

  // What load promises: ids are line numbers, every line a token (line ends stripped).
  HEED_FUZZ_REQUIRE(vocab->size() > 0);
  for (int32_t id = 0; id < vocab->size(); ++id) {
    const std::string& token = vocab->token(id);
    HEED_FUZZ_REQUIRE(token.find('\n') == std::string::npos);
    HEED_FUZZ_REQUIRE(vocab->find(token) == id);
  }
  // A saved vocabulary loads as the same tokens (a checkpoint's vocab.txt is the trained one).
  const std::string copy = (heed::fuzz::scratch_dir() / "saved_vocab.txt").string();
  vocab->save(copy);
  HEED_FUZZ_REQUIRE(heed::data::Vocab::load(copy).tokens() == vocab->tokens());

  for (bool lowercase : {true, false}) {
    std::optional<heed::data::WordPieceTokenizer> tokenizer;
    // A vocabulary without [UNK] is rejected by the tokenizer's constructor.
    heed::fuzz::rejecting_with_heed_errors(
        [&] { tokenizer.emplace(*vocab, heed::data::WordPieceOptions{.lowercase = lowercase}); });
    if (!tokenizer) return 0;
    // The vocabulary's tokens, each alone and all of them run together.
    std::string joined;
    for (int32_t id = 0; id < vocab->size() && id < 64; ++id) {
      const std::string& token = vocab->token(id);
      joined += token;
      heed::fuzz::check_tokenizer_on(*tokenizer, token, kText, 0, heed::data::Truncation::kHead);
    }
    heed::fuzz::check_tokenizer_on(*tokenizer, kText, joined, 0, heed::data::Truncation::kHead);
    heed::fuzz::check_tokenizer_on(*tokenizer, joined, kText, 7, heed::data::Truncation::kHeadTail);
  }
  return 0;
}
