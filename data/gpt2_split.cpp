#include "data/gpt2_split.h"

#include <unicode/regex.h>
#include <unicode/utext.h>

#include <memory>

#include "base/error.h"
#include "data/gpt2_ascii_split.h"

namespace heed::data {
namespace {

// GPT-2's pattern (openai/gpt-2 src/encoder.py), verbatim. ICU's \s is Unicode White_Space,
// as it is for Python's regex module and for the Rust regex under tiktoken; JavaScript's \s
// differs on U+0085 and U+FEFF (see tests/data/gpt2/README.md).
constexpr std::string_view kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// Appends the matches of `matcher`'s pattern in `text`, which `input` reads, to `words`. ICU
// matches the UTF-8 in place; its native indices are byte offsets into `text`.
void append_matches(icu::RegexMatcher& matcher, UText* input, std::string_view text,
                    std::vector<std::string_view>& words) {
  UErrorCode status = U_ZERO_ERROR;
  matcher.reset(input);
  while (matcher.find(status)) {
    const int64_t begin = matcher.start64(status), end = matcher.end64(status);
    words.push_back(text.substr(static_cast<size_t>(begin), static_cast<size_t>(end - begin)));
  }
  HEED_CHECK(U_SUCCESS(status), "byte-level BPE: ICU regex failed: {}", u_errorName(status));
}

// A run of whitespace is matched by backtracking over it; ICU's default 8 MB backtracking
// stack would refuse a text with megabytes of spaces that GPT-2 encodes.
std::unique_ptr<icu::RegexMatcher> unlimited_matcher(const icu::RegexPattern& pattern) {
  UErrorCode status = U_ZERO_ERROR;
  std::unique_ptr<icu::RegexMatcher> matcher(pattern.matcher(status));
  if (U_SUCCESS(status)) matcher->setStackLimit(0, status);
  HEED_CHECK(U_SUCCESS(status), "byte-level BPE: ICU regex setup failed: {}", u_errorName(status));
  return matcher;
}

}  // namespace

void split_gpt2_words(std::string_view utf8, std::vector<std::string_view>& words) {
  // Made once per thread: compiling the pattern and making a matcher cost more than matching
  // a line of a corpus.
  struct Splitter {
    std::unique_ptr<icu::RegexPattern> pattern;
    std::unique_ptr<icu::RegexMatcher> matcher;
    UText input = UTEXT_INITIALIZER;
    Splitter() {
      UErrorCode status = U_ZERO_ERROR;
      UParseError where;
      pattern.reset(icu::RegexPattern::compile(
          icu::UnicodeString::fromUTF8(icu::StringPiece(kGpt2Pattern.data(), kGpt2Pattern.size())),
          0, where, status));
      HEED_CHECK(U_SUCCESS(status), "ICU cannot compile GPT-2's pattern: {}", u_errorName(status));
      matcher = unlimited_matcher(*pattern);
    }
    ~Splitter() { utext_close(&input); }
  };
  // ICU's words there (checked against it in tests/data/gpt2_ascii_split_test.cpp), in a tenth
  // of ICU's time, which was half of encode's.
  if (split_gpt2_ascii(utf8, words)) return;
  thread_local Splitter splitter;
  UErrorCode status = U_ZERO_ERROR;
  utext_openUTF8(&splitter.input, utf8.data(), static_cast<int64_t>(utf8.size()), &status);
  HEED_CHECK(U_SUCCESS(status), "byte-level BPE: ICU cannot read the text: {}",
             u_errorName(status));
  append_matches(*splitter.matcher, &splitter.input, utf8, words);
}

}  // namespace heed::data
