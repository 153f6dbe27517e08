#pragma once
// GPT-2's byte-level alphabet: the visible symbol each of the 256 bytes is spelled with in
// vocab.json and merges.txt, back again, and the UTF-8 repair its decoder makes.
#include <array>
#include <string>
#include <string_view>

namespace heed::data {

// The symbol each byte is spelled with in vocab.json and merges.txt: the printable bytes
// ('!'..'~', U+00A1..U+00AC, U+00AE..U+00FF) stand for themselves, the other 68 for
// U+0100, U+0101, ... in increasing byte order.
const std::array<char32_t, 256>& bytes_to_unicode();

// The bytes a vocabulary entry spells. A code point outside the 256 symbols (an added token
// such as "<mask>" is all symbols; one with other characters is not) stands for its own UTF-8,
// as the tokenizers library's ByteLevel decoder does, rather than failing the whole decode.
std::string spelled_bytes(const std::string& token);

// `bytes` as valid UTF-8, each maximal invalid subsequence replaced by U+FFFD: what Python's
// bytes.decode("utf-8", errors="replace") gives (and so Hugging Face's decode).
std::string replace_invalid_utf8(std::string_view bytes);

}  // namespace heed::data
