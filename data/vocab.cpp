#include "data/vocab.h"

#include <fstream>

#include "autograd/error.h"
#include "data/fingerprint.h"
#include "data/unicode.h"

namespace heed::data {

Vocab::Vocab(std::vector<std::string> tokens) : tokens_(std::move(tokens)) {
  HEED_CHECK(!tokens_.empty(), "vocabulary is empty");
  ids_.reserve(tokens_.size());
  for (size_t i = 0; i < tokens_.size(); ++i) ids_[tokens_[i]] = static_cast<int32_t>(i);
}

Vocab Vocab::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  HEED_CHECK(in.good(), "{}: cannot open vocabulary file", path);
  std::vector<std::string> tokens;
  std::string line;
  size_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (size_t bad = find_invalid_utf8(line); bad != std::string::npos)
      fail("{}:{}: invalid UTF-8 at byte {} of the line", path, line_no, bad);
    tokens.push_back(std::move(line));
  }
  HEED_CHECK(!tokens.empty(), "{}: vocabulary file is empty", path);
  Vocab vocab(std::move(tokens));
  vocab.source_ = path;
  return vocab;
}

void Vocab::save(const std::string& path) const {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  HEED_CHECK(out.good(), "{}: cannot open for writing", path);
  for (const std::string& t : tokens_) {
    HEED_CHECK(t.find('\n') == std::string::npos, "{}: token with a newline cannot be saved", path);
    out << t << '\n';
  }
  out.flush();
  HEED_CHECK(out.good(), "{}: write failed", path);
}

const std::string& Vocab::token(int32_t id) const {
  HEED_CHECK(id >= 0 && id < size(), "token id {} is outside the vocabulary (size {})", id, size());
  return tokens_[static_cast<size_t>(id)];
}

uint64_t Vocab::fingerprint() const {
  Fnv1a64 h;
  for (const std::string& t : tokens_) {
    h.update(t);
    h.update(std::string_view("\n", 1));
  }
  return h.value();
}

}  // namespace heed::data
