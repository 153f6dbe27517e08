#include "io/json_file.h"

#include <fstream>

#include "base/error.h"
#include "io/atomic_file.h"
#include "io/text_file.h"

namespace heed::io {

void write_json_file(const std::string& path, const nlohmann::json& j) {
  write_file_atomically(path, j.dump(2) + "\n");
}

nlohmann::json read_json_file(const std::string& path) {
  check_not_a_directory(path);
  std::ifstream in(path);
  HEED_CHECK(in.good(), "cannot read {}", path);
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    fail("{}: not valid JSON: {}", path, e.what());
  }
}

}  // namespace heed::io
