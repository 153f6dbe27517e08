#pragma once
// The tokenisation of mteval-v13a.pl, as sacrebleu's default `13a` tokenizer applies it before
// BLEU: translation papers report BLEU over it, so scores are comparable only with it.
#include <string>
#include <string_view>
#include <vector>

namespace heed::decode {

// Python's str.isspace(): the characters that str.split() and str.strip() treat as whitespace
// (sacrebleu splits and strips with them).
bool is_python_whitespace(char32_t c);

// The words of `text` (UTF-8) split at runs of Python whitespace, as Python's str.split().
std::vector<std::string> split_python_whitespace(std::string_view text);

// `line` tokenised as sacrebleu's Tokenizer13a does: `<skipped>` and hyphen-newline removed,
// newlines made spaces, the entities &quot; &amp; &lt; &gt; unescaped (in that order, so
// "&amp;lt;" becomes "<"), every ASCII punctuation mark except ' , - . split off, a period or
// comma split off unless it stands between digits, a dash split off after a digit, and the
// words joined by single spaces.
std::string tokenize_13a(std::string_view line);

}  // namespace heed::decode
