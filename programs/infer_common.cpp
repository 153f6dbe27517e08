#include "programs/infer_common.h"

#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "autograd/error.h"
#include "data/tokenizer_io.h"
#include "nn/pretrained_io.h"

namespace heed::infer {
namespace {

namespace fs = std::filesystem;

std::string join_or(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) out += i + 1 == names.size() ? " or " : ", ";
    out += names[i];
  }
  return out;
}

}  // namespace

Checkpoint load_checkpoint(const std::string& dir, const std::string& command,
                           const std::vector<std::string>& architectures) {
  HEED_CHECK(fs::exists(dir), "checkpoint {} does not exist", dir);
  HEED_CHECK(fs::is_directory(dir), "checkpoint {} is not a directory", dir);
  const std::string arch = nn::declared_architecture(nn::read_model_config(dir));
  HEED_CHECK(std::find(architectures.begin(), architectures.end(), arch) != architectures.end(),
             "checkpoint {} is a {}; {} needs a {}", dir, arch, command, join_or(architectures));
  Checkpoint c{dir, nn::from_pretrained(dir), data::TextTokenizer::load(dir)};
  c.model->eval();
  return c;
}

std::vector<std::string> input_texts(const std::string& text, const std::string& what) {
  if (text != "-") {
    HEED_CHECK(text.find_first_not_of(" \t\r\n") != std::string::npos, "empty {}", what);
    return {text};
  }
  std::vector<std::string> texts;
  std::string line;
  while (std::getline(std::cin, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    HEED_CHECK(line.find_first_not_of(" \t") != std::string::npos, "stdin:{}: empty {}",
               texts.size() + 1, what);
    texts.push_back(line);
  }
  HEED_CHECK(!texts.empty(), "no {} on stdin", what);
  return texts;
}

void check_length(size_t n, int64_t limit, const std::string& what, const std::string& field) {
  HEED_CHECK(static_cast<int64_t>(n) <= limit, "{} is {} tokens; the model takes at most {} ({})",
             what, n, limit, field);
}

std::string fixed4(double x) {
  return fmt::format("{:.4f}", x);
}

}  // namespace heed::infer
