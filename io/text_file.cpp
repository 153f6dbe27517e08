#include "io/text_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/error.h"

namespace heed::io {

void check_not_a_directory(const std::string& path) {
  std::error_code ec;
  HEED_CHECK(!std::filesystem::is_directory(path, ec), "{}: is a directory, not a file", path);
}

std::string read_text_file(const std::string& path) {
  check_not_a_directory(path);
  std::ifstream in(path, std::ios::binary);
  HEED_CHECK(in.good(), "cannot read {}: {}", path, std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  HEED_CHECK(!in.bad(), "cannot read {}: {}", path, std::strerror(errno));
  return text.str();
}

}  // namespace heed::io
