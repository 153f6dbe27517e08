#pragma once
// Hugging Face's byte-level BPE files: vocab.json (token -> id) and merges.txt (one merge a
// line, by rank). Their writer is save_byte_level_bpe (byte_level_bpe_trainer.h).
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace heed::data {

// vocab.json's tokens by id: an object of token -> id with the ids 0..N-1 each once, no key
// twice. A missing or malformed file throws heed::Error naming it.
std::vector<std::string> read_vocab_json(const std::string& path);

// merges.txt's merges in rank order, and the line each is on (`lines`): an optional
// "#version" first line, then "a b" per line. A malformed line throws naming file and line.
std::vector<std::pair<std::string, std::string>> read_merges_txt(const std::string& path,
                                                                 std::vector<size_t>& lines);

}  // namespace heed::data
