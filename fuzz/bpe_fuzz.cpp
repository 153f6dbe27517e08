// The byte-level BPE's loader and encoder (data/byte_level_bpe.h). Byte 0 chooses (its value
// modulo 3); the rest is:
//   0  vocab.json   with a fixed merges.txt; an accepted vocabulary encodes and decodes a fixed
//                   text back to itself
//   1  merges.txt   with a fixed vocabulary of the 256 byte symbols and the merges' results
//   2  a text       for GPT-2's own files (tests/data/gpt2, loaded once): valid UTF-8 must encode
//                   to ids in range that decode to the same bytes; anything else must be refused
//                   with heed::Error
#include <nlohmann/json.hpp>

#include "data/byte_level_bpe.h"
#include "fuzz/fuzz_util.h"
#include "io/utf8.h"

namespace {

using heed::data::ByteLevelBpe;
using heed::fuzz::write_scratch;

constexpr std::string_view kMerges = "#version: 0.2\nĠ t\nh e\nĠt he\n";
constexpr std::string_view kText = "the theme, then\n ĠΩ 😀";

// The 256 byte symbols, then the merges' results.
std::string small_vocab() {
  nlohmann::json vocab = nlohmann::json::object();
  for (char32_t symbol : heed::data::bytes_to_unicode()) {
    std::string token;
    heed::io::append_utf8(token, symbol);
    vocab[token] = static_cast<int>(vocab.size());
  }
  for (const char* token : {"Ġt", "he", "Ġthe"}) vocab[token] = static_cast<int>(vocab.size());
  return vocab.dump();
}

void check_round_trip(const ByteLevelBpe& bpe, std::string_view text) {
  const std::vector<int32_t> ids = bpe.encode(text);
  for (int32_t id : ids) HEED_FUZZ_REQUIRE(id >= 0 && id < bpe.vocab_size());
  HEED_FUZZ_REQUIRE(bpe.decode_bytes(ids) == text);
}

void vocab_json(std::string_view bytes) {
  const ByteLevelBpe bpe = ByteLevelBpe::load(write_scratch("bpe/vocab.json", bytes),
                                              write_scratch("bpe/merges.txt", kMerges));
  check_round_trip(bpe, kText);
}

void merges_txt(std::string_view bytes) {
  static const std::string vocab = small_vocab();
  const ByteLevelBpe bpe = ByteLevelBpe::load(write_scratch("bpe/vocab.json", vocab),
                                              write_scratch("bpe/merges.txt", bytes));
  check_round_trip(bpe, kText);
}

void text(std::string_view bytes) {
  static const ByteLevelBpe gpt2 =
      ByteLevelBpe::load("tests/data/gpt2/vocab.json", "tests/data/gpt2/merges.txt");
  if (heed::io::find_invalid_utf8(bytes) != std::string_view::npos) {
    try {
      gpt2.encode(bytes);
    } catch (const heed::Error&) {
      return;
    }
    HEED_FUZZ_REQUIRE(!"invalid UTF-8 was encoded");
  }
  check_round_trip(gpt2, bytes);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view bytes = heed::fuzz::as_text(data + 1, size - 1);
  heed::fuzz::rejecting_with_heed_errors([&] {
    switch (data[0] % 3) {
      case 0:
        return vocab_json(bytes);
      case 1:
        return merges_txt(bytes);
      default:
        return text(bytes);
    }
  });
  return 0;
}
