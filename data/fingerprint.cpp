#include "data/fingerprint.h"

#include <fstream>
#include <vector>

#include "base/error.h"

namespace heed::data {

uint64_t fingerprint_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  HEED_CHECK(in.good(), "{}: cannot open file", path);
  Fnv1a64 h;
  std::vector<char> buffer(1 << 20);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    h.update(std::string_view(buffer.data(), static_cast<size_t>(in.gcount())));
  }
  HEED_CHECK(in.eof(), "{}: read failed", path);
  return h.value();
}

}  // namespace heed::data
