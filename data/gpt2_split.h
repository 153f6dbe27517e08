#pragma once
// GPT-2's pre-tokenizer: the words its pattern cuts a text into, before byte-level BPE.
#include <string_view>
#include <vector>

namespace heed::data {

// Appends to `words` the words GPT-2's pattern cuts `utf8` into, as views of it, in order (the
// split ByteLevelBpe::pre_tokenize makes, without a vocabulary or a prefix space). All-ASCII
// text, most of an English corpus, is split by hand (gpt2_ascii_split.h); the rest by ICU's
// regex engine. `utf8` must be valid UTF-8: ICU would read an invalid byte as U+FFFD, so
// callers check first. Safe to call from several threads at once (each keeps its own matcher).
void split_gpt2_words(std::string_view utf8, std::vector<std::string_view>& words);

}  // namespace heed::data
