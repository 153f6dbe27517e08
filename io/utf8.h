#pragma once
// Strict UTF-8, as Rust's str::from_utf8 (which the safetensors reference reader uses) and
// Python's decoder define it: no overlong forms, no surrogates, nothing past U+10FFFF.
#include <cstddef>
#include <string>
#include <string_view>

namespace heed::io {

// The byte offset of the first invalid UTF-8 sequence, or npos when `text` is valid.
size_t find_invalid_utf8(std::string_view text);
// Decodes UTF-8 into code points. Invalid input throws heed::Error naming `where` and the
// byte offset.
std::u32string decode_utf8(std::string_view text, std::string_view where);
void append_utf8(std::string& out, char32_t cp);
std::string encode_utf8(std::u32string_view cps);

}  // namespace heed::io
