#pragma once
// Reading a whole file (its writes go through io/atomic_file.h).
#include <string>

namespace heed::io {

// The file's bytes; throws heed::Error naming the file when it cannot be read.
std::string read_text_file(const std::string& path);

}  // namespace heed::io
