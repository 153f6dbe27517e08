#pragma once
// Reading a whole file (its writes go through io/atomic_file.h).
#include <string>

namespace heed::io {

// Throws heed::Error "PATH: is a directory, not a file" when it is one: reading a directory as
// a stream fails late, with a message that does not say why.
void check_not_a_directory(const std::string& path);

// The file's bytes; throws heed::Error naming the file when it cannot be read.
std::string read_text_file(const std::string& path);

}  // namespace heed::io
