#pragma once
// GPT-2's pattern ('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)
// hand-run over ASCII text, where its classes are plain: letters A-Z a-z, digits 0-9, white
// space \t \n \v \f \r and ' ' (Unicode's White_Space, as ICU reads \s). ICU's regex engine
// spends far longer per word, and most lines of an English corpus are ASCII.
#include <string_view>
#include <vector>

namespace heed::data {

// Appends the words of `text` to `words` (views of it) and returns true when `text` is all
// ASCII; returns false, appending nothing, when it holds any other byte.
bool split_gpt2_ascii(std::string_view text, std::vector<std::string_view>& words);

}  // namespace heed::data
