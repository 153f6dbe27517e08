// The SentencePiece loader (data/sentencepiece_tokenizer.h, over libsentencepiece): the bytes
// are a spiece.model. An accepted model must encode a fixed text to ids in its range, and
// decode them without error.
#include "data/sentencepiece_tokenizer.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path =
      heed::fuzz::write_scratch("spiece.model", heed::fuzz::as_text(data, size));
  heed::fuzz::rejecting_with_heed_errors([&] {
    const auto spm = heed::data::SentencePieceTokenizer::load(path);
    const std::vector<int32_t> ids = spm.encode("The cat sat on the mat, naïvely. 東京 😀");
    for (int32_t id : ids) HEED_FUZZ_REQUIRE(id >= 0 && id < spm.vocab_size());
    spm.decode(ids);
  });
  return 0;
}
