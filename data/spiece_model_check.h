#pragma once
// A guard in front of libsentencepiece's loader. Its 0.1.97 aborts the whole process (an
// exception thrown through frames that cannot pass it on) when a model's piece is empty or holds
// a NUL byte: its trie refuses such keys. Found by fuzz/spm_fuzz.cpp. So heed looks at the
// pieces, and only at them, before the library builds its model; everything else about the file
// (its protobuf, its normalizer, its scores) stays the library's to read and judge.
#include <optional>
#include <string>
#include <string_view>

namespace heed::data {

// Why the library could not hold one of the model's pieces ("piece 3 is empty"), or nullopt.
// A file that is not a readable protobuf returns nullopt: the library says what is wrong.
std::optional<std::string> unloadable_piece(std::string_view model_bytes);

}  // namespace heed::data
