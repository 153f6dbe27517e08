#include "data/byte_symbols.h"

#include <cstdint>

#include "data/unicode.h"

namespace heed::data {
namespace {

constexpr char32_t kFirstRemappedSymbol = 0x100;
// One past the largest symbol bytes_to_unicode() uses: 0x100 + the 68 remapped bytes.
constexpr char32_t kSymbolsEnd = kFirstRemappedSymbol + 68;

bool is_printable_byte(int b) {
  return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

std::array<char32_t, 256> make_bytes_to_unicode() {
  std::array<char32_t, 256> table{};
  char32_t next = kFirstRemappedSymbol;
  for (int b = 0; b < 256; ++b) table[b] = is_printable_byte(b) ? char32_t(b) : next++;
  return table;
}

// symbol -> byte, or -1 for a code point that is not one of the 256 symbols.
std::array<int16_t, kSymbolsEnd> make_unicode_to_bytes() {
  std::array<int16_t, kSymbolsEnd> table;
  table.fill(-1);
  for (int b = 0; b < 256; ++b) table[bytes_to_unicode()[b]] = static_cast<int16_t>(b);
  return table;
}

}  // namespace

const std::array<char32_t, 256>& bytes_to_unicode() {
  static const std::array<char32_t, 256> table = make_bytes_to_unicode();
  return table;
}

std::string spelled_bytes(const std::string& token) {
  static const std::array<int16_t, kSymbolsEnd> to_byte = make_unicode_to_bytes();
  std::string bytes;
  for (char32_t cp : decode_utf8(token, "vocab.json token")) {
    const int b = cp < kSymbolsEnd ? to_byte[cp] : -1;
    if (b >= 0) {
      bytes.push_back(static_cast<char>(b));
    } else {
      append_utf8(bytes, cp);
    }
  }
  return bytes;
}

// Python's UTF-8 decoder replaces each maximal subpart of an ill-formed sequence (Unicode
// 3.9, "U+FFFD Substitution of Maximal Subparts"): the longest prefix of a well-formed
// sequence, or else one byte. The second byte's range depends on the first (Table 3-7).
std::string replace_invalid_utf8(std::string_view bytes) {
  const auto* s = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t n = bytes.size();
  std::string out;
  out.reserve(n);
  for (size_t i = 0; i < n;) {
    const unsigned char b = s[i];
    int more = 0;  // continuation bytes the lead byte asks for
    unsigned char lo = 0x80, hi = 0xBF;
    if (b < 0x80) {
      more = 0;
    } else if (b >= 0xC2 && b <= 0xDF) {
      more = 1;
    } else if (b >= 0xE0 && b <= 0xEF) {
      more = 2, lo = b == 0xE0 ? 0xA0 : 0x80, hi = b == 0xED ? 0x9F : 0xBF;
    } else if (b >= 0xF0 && b <= 0xF4) {
      more = 3, lo = b == 0xF0 ? 0x90 : 0x80, hi = b == 0xF4 ? 0x8F : 0xBF;
    } else {
      more = -1;  // never a lead byte
    }
    size_t end = i + 1;
    for (int k = 0; k < more && end < n; ++k, ++end) {
      const unsigned char c = s[end];
      if (c < (k == 0 ? lo : 0x80) || c > (k == 0 ? hi : 0xBF)) break;
    }
    if (more >= 0 && end - i == static_cast<size_t>(more) + 1) {
      out.append(bytes.substr(i, end - i));
    } else {
      out += "\xEF\xBF\xBD";
    }
    i = end;
  }
  return out;
}

}  // namespace heed::data
