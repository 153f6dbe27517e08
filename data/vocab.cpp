#include "data/vocab.h"

#include <filesystem>
#include <fstream>

#include "base/error.h"
#include "data/fingerprint.h"
#include "data/unicode.h"
#include "io/atomic_file.h"

namespace heed::data {

Vocab::Vocab(std::vector<std::string> tokens) : tokens_(std::move(tokens)) {
  HEED_CHECK(!tokens_.empty(), "vocabulary is empty");
  ids_.reserve(tokens_.size());
  for (size_t i = 0; i < tokens_.size(); ++i) {
    const auto [it, added] = ids_.emplace(tokens_[i], static_cast<int32_t>(i));
    HEED_CHECK(added, "vocabulary lists the token '{}' twice (ids {} and {})", tokens_[i],
               it->second, i);
  }
}

Vocab Vocab::load(const std::string& path) {
  HEED_CHECK(!std::filesystem::is_directory(path),
             "{}: is a directory, not a vocabulary file (one token per line)", path);
  std::ifstream in(path, std::ios::binary);
  HEED_CHECK(in.good(), "{}: cannot open vocabulary file", path);
  std::vector<std::string> tokens;
  std::unordered_map<std::string, size_t, StringHash, std::equal_to<>> line_of;
  std::string line;
  size_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    // A token of its own ending in "\r" would not survive save (its line end would be read as
    // a Windows one); WordPiece never makes one, since "\r" is whitespace to it.
    HEED_CHECK(line.empty() || line.back() != '\r',
               "{}:{}: the token ends in a carriage return (a \"\\r\\r\\n\" line end?)", path,
               line_no);
    if (size_t bad = find_invalid_utf8(line); bad != std::string::npos)
      fail("{}:{}: invalid UTF-8 at byte {} of the line", path, line_no, bad);
    // A second id for a token would leave one of the two unreachable: which one encoding
    // uses depends on the reader (transformers keeps the last), so it is refused.
    const auto [it, added] = line_of.emplace(line, line_no);
    HEED_CHECK(added, "{}:{}: the token '{}' is listed twice (first at line {})", path, line_no,
               line, it->second);
    tokens.push_back(std::move(line));
  }
  HEED_CHECK(!in.bad(), "{}: read failed after line {}", path, line_no);
  HEED_CHECK(!tokens.empty(), "{}: vocabulary file is empty", path);
  Vocab vocab(std::move(tokens));
  vocab.source_ = path;
  return vocab;
}

void Vocab::save(const std::string& path) const {
  std::string text;
  for (const std::string& t : tokens_) {
    HEED_CHECK(t.find('\n') == std::string::npos, "{}: token with a newline cannot be saved", path);
    // load strips one "\r" from each line end (Windows line ends), so this token would load
    // back without its own.
    HEED_CHECK(t.empty() || t.back() != '\r',
               "{}: token {} ends in a carriage return and cannot be saved (it would load back "
               "without it)",
               path, static_cast<int32_t>(&t - tokens_.data()));
    text += t;
    text += '\n';
  }
  // A failed write (a full disk) leaves the old file, or none: never a partial vocabulary
  // that later runs would load.
  io::write_file_atomically(path, text);
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
