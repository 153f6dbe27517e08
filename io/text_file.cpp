#include "io/text_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "autograd/error.h"

namespace heed::io {

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  HEED_CHECK(in.good(), "cannot read {}: {}", path, std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  HEED_CHECK(!in.bad(), "cannot read {}: {}", path, std::strerror(errno));
  return text.str();
}

}  // namespace heed::io
