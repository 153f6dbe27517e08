#include "data/gpt2_ascii_split.h"

#include <array>
#include <cstdint>

namespace heed::data {
namespace {

enum class CharClass : uint8_t { kOther, kLetter, kDigit, kSpace };

constexpr std::array<CharClass, 128> make_classes() {
  std::array<CharClass, 128> classes{};  // kOther: punctuation, symbols and controls
  for (int c = 'a'; c <= 'z'; ++c) classes[c] = classes[c - 'a' + 'A'] = CharClass::kLetter;
  for (int c = '0'; c <= '9'; ++c) classes[c] = CharClass::kDigit;
  for (int c = '\t'; c <= '\r'; ++c) classes[c] = CharClass::kSpace;
  classes[' '] = CharClass::kSpace;
  return classes;
}
constexpr std::array<CharClass, 128> kClasses = make_classes();

CharClass class_of(char c) {
  return kClasses[static_cast<unsigned char>(c)];
}

// The end of 's 't 're 've 'm 'll 'd at `i` (an apostrophe), or 0 when none starts there.
size_t contraction_end(std::string_view text, size_t i) {
  const std::string_view rest = text.substr(i + 1);
  if (rest.empty()) return 0;
  const char c = rest[0];
  if (c == 's' || c == 't' || c == 'm' || c == 'd') return i + 2;
  if (rest.starts_with("re") || rest.starts_with("ve") || rest.starts_with("ll")) return i + 3;
  return 0;
}

}  // namespace

bool split_gpt2_ascii(std::string_view text, std::vector<std::string_view>& words) {
  for (char c : text)
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  const size_t n = text.size();
  const auto run_end = [&](size_t j, CharClass k) {
    while (j < n && class_of(text[j]) == k) ++j;
    return j;
  };
  for (size_t i = 0, end; i < n; i = end) {
    end = text[i] == '\'' ? contraction_end(text, i) : 0;
    if (end == 0) {
      // ` ?\p{L}+`, ` ?\p{N}+`, ` ?[^\s\p{L}\p{N}]+`: the class of the first character after
      // an optional space says which alternative matches, and the run is maximal.
      const size_t first =
          text[i] == ' ' && i + 1 < n && class_of(text[i + 1]) != CharClass::kSpace ? i + 1 : i;
      const CharClass k = class_of(text[first]);
      end = run_end(first, k);
      // `\s+(?!\S)`: a run of white space before a non-space gives up its last character,
      // which then leads the next word (or, alone before it, is `\s+` by itself).
      if (k == CharClass::kSpace && end < n && end - i >= 2) --end;
    }
    words.push_back(text.substr(i, end - i));
  }
  return true;
}

}  // namespace heed::data
