#include "data/unicode.h"

#include <unicode/locid.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include "base/error.h"

namespace heed::data {
namespace {

bool is_ascii(std::u32string_view text) {
  for (char32_t c : text)
    if (c >= 0x80) return false;
  return true;
}

icu::UnicodeString to_icu(std::u32string_view text) {
  return icu::UnicodeString::fromUTF32(reinterpret_cast<const UChar32*>(text.data()),
                                       static_cast<int32_t>(text.size()));
}

std::u32string from_icu(const icu::UnicodeString& s) {
  std::u32string out(static_cast<size_t>(s.countChar32()), U'\0');
  UErrorCode status = U_ZERO_ERROR;
  s.toUTF32(reinterpret_cast<UChar32*>(out.data()), static_cast<int32_t>(out.size()), status);
  HEED_CHECK(U_SUCCESS(status), "ICU UTF-32 conversion failed: {}", u_errorName(status));
  return out;
}

std::u32string normalize(std::u32string_view text, bool compose) {
  if (is_ascii(text)) return std::u32string(text);  // ASCII is invariant under NFC and NFD
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* n =
      compose ? icu::Normalizer2::getNFCInstance(status) : icu::Normalizer2::getNFDInstance(status);
  HEED_CHECK(U_SUCCESS(status), "ICU normalizer unavailable: {}", u_errorName(status));
  icu::UnicodeString out = n->normalize(to_icu(text), status);
  HEED_CHECK(U_SUCCESS(status), "ICU normalization failed: {}", u_errorName(status));
  return from_icu(out);
}

}  // namespace

bool is_bert_whitespace(char32_t cp) {
  if (cp == U' ' || cp == U'\t' || cp == U'\n' || cp == U'\r') return true;
  if (cp < 0x80) return false;
  return (U_GET_GC_MASK(static_cast<UChar32>(cp)) & U_GC_ZS_MASK) != 0;
}

bool is_bert_control(char32_t cp) {
  if (cp == U'\t' || cp == U'\n' || cp == U'\r') return false;
  return (U_GET_GC_MASK(static_cast<UChar32>(cp)) & U_GC_C_MASK) != 0;
}

bool is_bert_punctuation(char32_t cp) {
  // BERT treats every non-alphanumeric ASCII character as punctuation ($, ^, `, + are not P*).
  if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) ||
      (cp >= 123 && cp <= 126))
    return true;
  if (cp < 0x80) return false;
  return (U_GET_GC_MASK(static_cast<UChar32>(cp)) & U_GC_P_MASK) != 0;
}

bool is_cjk_ideograph(char32_t cp) {
  // The ranges of tokenization_bert.py's _is_chinese_char (Python, not the Rust variant).
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

bool is_split_whitespace(char32_t cp) {
  if (cp < 0x80) return cp == U' ' || (cp >= 9 && cp <= 13) || (cp >= 0x1C && cp <= 0x1F);
  return u_isUWhiteSpace(static_cast<UChar32>(cp)) != 0;
}

bool is_nonspacing_mark(char32_t cp) {
  if (cp < 0x80) return false;
  return (U_GET_GC_MASK(static_cast<UChar32>(cp)) & U_GC_MN_MASK) != 0;
}

std::u32string to_nfd(std::u32string_view text) {
  return normalize(text, false);
}
std::u32string to_nfc(std::u32string_view text) {
  return normalize(text, true);
}

std::u32string to_lower(std::u32string_view text) {
  if (is_ascii(text)) {
    std::u32string out(text);
    for (char32_t& c : out)
      if (c >= U'A' && c <= U'Z') c += 32;
    return out;
  }
  icu::UnicodeString s = to_icu(text);
  s.toLower(icu::Locale::getRoot());  // locale-independent full mapping, like str.lower()
  return from_icu(s);
}

std::u32string strip_accents(std::u32string_view text) {
  if (is_ascii(text)) return std::u32string(text);
  std::u32string decomposed = to_nfd(text);
  std::u32string out;
  out.reserve(decomposed.size());
  for (char32_t c : decomposed)
    if (!is_nonspacing_mark(c)) out.push_back(c);
  return out;
}

}  // namespace heed::data
